// The result cache: a request identical to a recent one gets the stored TeX result without
// running TeX. Identical means the same scope (the account, the anonymous caller's address,
// or the shared public gallery), engine, source, every job file's name and bytes, the plan
// limits that shape the output, and the UTC day (\today). Only delivered results are kept;
// the service still applies its checks, charges the compile and signs a fresh link.
// In memory, least recently used first out, bounded by entries and by bytes.
import { createHash } from 'node:crypto';
import type { TexResult } from '../tex/job.js';

export interface ResultKeyParts {
  /** Whose results these are: `account:<id>`, `anonymous:<ip>`, or `public` for gallery renders. */
  scope: string;
  /** The TeX Live year that runs the job: another year may typeset differently. */
  texlive?: string;
  compiler: string;
  source: string;
  files: ReadonlyArray<{ name: string; data: Buffer }>;
  timeoutMs: number;
  maxFileBytes: number;
  keepPages: number | undefined;
  /** YYYY-MM-DD (UTC): a document may print the date. */
  day: string;
  /** The output step (issue 23), serialised: the same source with other output options is another result. */
  output?: string;
  /** TeX went on past errors (on_error "continue"): a PDF only such a run gives. */
  continueOnError?: boolean;
}

/** A hash over every part, each length-prefixed so no two requests share a key by concatenation. */
export function resultKey(parts: ResultKeyParts): string {
  const hash = createHash('sha256');
  const add = (value: string | Buffer) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  };
  for (const value of [parts.scope, parts.texlive ?? '', parts.compiler, parts.source, String(parts.timeoutMs), String(parts.maxFileBytes), String(parts.keepPages ?? ''), parts.day, parts.output ?? '', parts.continueOnError ? 'continue' : '']) {
    add(value);
  }
  const files = [...parts.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  add(String(files.length));
  for (const file of files) {
    add(file.name);
    add(file.data);
  }
  return hash.digest('hex');
}

export interface ResultCacheLimits {
  maxEntries: number;
  maxBytes: number;
}

/** What an entry weighs: the PDF, the transcript and a little for the rest. */
function weight(result: TexResult): number {
  return (result.pdf?.length ?? 0) + Buffer.byteLength(result.log) + 1024;
}

export class ResultCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly entries = new Map<string, TexResult>();
  private total = 0;
  /** Lookups answered and not (quire_result_cache_{hits,misses}_total): the bench counts its rows' hits with them. */
  readonly stats = { hits: 0, misses: 0 };

  constructor(private readonly limits: ResultCacheLimits) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.total };
  }

  get(key: string): TexResult | undefined {
    const hit = this.entries.get(key);
    if (!hit) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** Keeps a delivered result; anything else (a failure, a timeout) is never cached. */
  set(key: string, result: TexResult): void {
    if (result.outcome !== 'ok' || !result.pdf || this.limits.maxEntries === 0) return;
    const size = weight(result);
    if (size > this.limits.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.total -= weight(old);
      this.entries.delete(key);
    }
    this.entries.set(key, result);
    this.total += size;
    for (const [oldest, value] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.total <= this.limits.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= weight(value);
    }
  }
}
