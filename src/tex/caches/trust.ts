// What the preamble caches share (preamble-cache.ts, paused-cache.ts): when a run that started
// from a cache's work is trusted, and the TeX Live identity every cache key holds.
import type { TexResult } from '../job.js';
import { texliveIdentity } from './preamble.js';

/** How long the TeX Live identity in the preamble keys is trusted before it is read again. */
const TEXLIVE_REFRESH_MS = 10 * 60 * 1000;

/**
 * A run that started from a format or a paused preamble is trusted when it delivered, timed
 * out, or stopped on an error TeX placed on a body line of main.tex (past the preamble the
 * cache replaced). Anything else (an error in the preamble, no transcript, a refused or
 * unmeasurable output) may be the cache's fault and runs again cold.
 */
export function doubtful(result: TexResult, preambleLines: number): boolean {
  if (result.outcome === 'ok' || result.outcome === 'timeout') return false;
  if (result.outcome !== 'failed') return true;
  const at = /^\.\/main\.tex:(\d+): /m.exec(result.log);
  return !at || Number(at[1]) <= preambleLines;
}

/**
 * A tagged job (issue 40) from a cache is trusted only with a clean conformance report: a
 * failed check may be the cache's (a structure tree the format or paused process got wrong),
 * so that job runs again cold, and the cold run's report is the one delivered.
 */
export function taggedDoubt(result: TexResult, tagged: boolean): boolean {
  return tagged && result.outcome === 'ok' && (result.conformance?.violations.length ?? 1) > 0;
}

/** Whether a cold run contradicts the cache's: the same job, another outcome, conformance report or warnings. */
export function contradicts(cached: TexResult, cold: TexResult): boolean {
  const facts = (r: TexResult) => JSON.stringify([r.outcome, r.totalPages, r.conformance ?? null, r.warnings ?? []]);
  return facts(cached) !== facts(cold);
}

/** The TeX Live identity of the image `root` (preamble.ts texliveIdentity), read again every TEXLIVE_REFRESH_MS; null when unknown. */
export class TexliveRefresh {
  private last: { at: number; id: Promise<{ id: string; baseBytes: number } | null> } | null = null;

  constructor(private readonly root: string | undefined) {}

  get(): Promise<{ id: string; baseBytes: number } | null> {
    if (!this.last || performance.now() - this.last.at > TEXLIVE_REFRESH_MS) {
      this.last = { at: performance.now(), id: texliveIdentity(this.root).catch(() => null) };
    }
    return this.last.id;
  }
}
