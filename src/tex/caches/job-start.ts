// How a job starts, as the caches decide it and hand it to the runner in one value: cold (the
// uid's warm sandbox, its engine on the base format), from a preamble format (the runner starts
// the format engine on the request's path), from a primed sandbox (the format and its engine
// already there: primed-formats.ts) or from a paused process (its preamble already run:
// paused.ts). The runner knows these four and nothing of how a cache finds or keeps them; a
// new cache makes one of them, or a new kind here, and adds no method to the runner.
import { FORMAT_ENGINE, formatEngineArgs } from '../job.js';
import type { SandboxPool } from '../sandbox/pool.js';
import type { Session } from '../sandbox/session.js';
import type { FormatEntry } from './format-cache.js';

/** A preamble format as a job runs with it: its bytes, and whether its engines may read the core font map. */
export type JobFormat = Pick<FormatEntry, 'fmt' | 'coreMap'>;

export type JobStart =
  | { from: 'cold' }
  | { from: 'format'; format: JobFormat }
  /** A sandbox made by primeSandbox for this format, used once. */
  | { from: 'primed'; format: JobFormat; session: Session }
  /** A sandbox made by pauseSandbox for this job's preamble, used once. */
  | { from: 'paused'; session: Session };

export const COLD: JobStart = { from: 'cold' };

/** The format engine, started ahead on the preamble format in the session's workspace. */
export function startFormatEngine(pool: SandboxPool, session: Session, format: JobFormat): Promise<void> {
  return session.startEngine(FORMAT_ENGINE, pool.command(session, formatEngineArgs(false, formatCoreMap(pool, session, format))));
}

/** The core font map a format's engines read (as the session sees it), when the format allows it. */
export function formatCoreMap(pool: SandboxPool, session: Session, format: JobFormat): string | undefined {
  return format.coreMap ? pool.coreMap(session, 'pdflatex') : undefined;
}
