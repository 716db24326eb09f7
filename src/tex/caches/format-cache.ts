// The preamble cache's store: dumped formats held in memory, least recently used first out,
// bounded by their total bytes. An entry is found by its key (see preamble.ts) and used only
// when the job brings no file the build did not have (a preamble reads no job file: a
// probe for a missing one is all it may have made).
import { createHash } from 'node:crypto';

export interface FormatEntry {
  /** The dumped format (pdftex .fmt). */
  fmt: Buffer;
  /** Names of every job file present at the build: a job with another file might make the preamble read it. */
  present: ReadonlySet<string>;
  /**
   * Every font the preamble loaded (and the format therefore holds without opening its metrics
   * again) is in the core font map: the format's engines may read that map (font-map.ts).
   */
  coreMap?: boolean;
}

export interface FormatCacheStats {
  hits: number;
  /** Hits whose format engine a primed sandbox had started (primed-formats.ts). */
  primed: number;
  misses: number;
  builds: number;
  /** Builds thrown away (failed, doubtful, not identical) and entries dropped after a bad run. */
  rejections: number;
  evictions: number;
}

const REFUSED_KEYS = 4096;

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export class FormatCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly entries = new Map<string, FormatEntry>();
  private total = 0;
  /** Keys whose build was rejected (or whose format misbehaved): not built again. Bounded, oldest out. */
  private readonly refused = new Set<string>();
  readonly stats: FormatCacheStats = { hits: 0, primed: 0, misses: 0, builds: 0, rejections: 0, evictions: 0 };

  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry for `key` when the job has no file its build lacked; counts a hit or a miss. */
  lookup(key: string, files: ReadonlyArray<{ name: string; data: Buffer }>): FormatEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry || !matches(entry, files)) {
      this.stats.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.stats.hits++;
    return entry;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Keeps a verified format; one larger than the whole budget is not kept. */
  admit(key: string, entry: FormatEntry): boolean {
    if (entry.fmt.length > this.maxBytes) return false;
    this.drop(key);
    this.entries.set(key, entry);
    this.total += entry.fmt.length;
    for (const [oldest, value] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= value.fmt.length;
      this.stats.evictions++;
    }
    return true;
  }

  /** Remembers that `key` is not to be built again (its day ends it: the day is in the key). */
  refuse(key: string): void {
    this.drop(key);
    this.refused.delete(key);
    this.refused.add(key);
    for (const oldest of this.refused) {
      if (this.refused.size <= REFUSED_KEYS) break;
      this.refused.delete(oldest);
    }
  }

  isRefused(key: string): boolean {
    return this.refused.has(key);
  }

  drop(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.total -= old.fmt.length;
  }
}

/** The job brings no file the build did not have: the preamble may have probed for it and found none. */
function matches(entry: FormatEntry, files: ReadonlyArray<{ name: string; data: Buffer }>): boolean {
  return files.every((file) => entry.present.has(file.name));
}
