// Primed preamble formats: for a pdflatex preamble the cache holds a format of (preamble-cache.ts),
// a fresh sandbox of the slot's uid that already holds the format and runs the format engine,
// which has loaded it and read the font map and waits for its line, as the slots' warm
// engines do with the base format. Without one a job with a format starts that engine on its
// request's path (about 100 ms before its first line). Each sandbox is handed to one job of
// the same uid and format and never used again; a job's own files reach it only once the job
// has taken it. Bounded in count and age; started after a format is admitted and after each job
// that used one, off the request's path. When that job took two passes or more (a contents page,
// LastPage) the sandbox starts the second pass's engine too, beside the first (Session.startNext):
// a second engine that finishes loading while the first pass runs, instead of one started then.
import { lchown, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FORMAT } from '../job.js';
import type { SandboxPool } from '../sandbox/pool.js';
import type { Session } from '../sandbox/session.js';
import { startFormatEngine, type JobFormat } from './job-start.js';

/**
 * A fresh sandbox of `pool` on `uid` holding the preamble format `format`, its format engine
 * started (loading it and the font map, then waiting for its line): the session a job of the
 * same format runs from (JobStart "primed"), once. `twoPasses`: the engine of a second pass is
 * started beside the first (its last job took two passes or more).
 */
export async function primeSandbox(pool: SandboxPool, uid: number | undefined, format: JobFormat, twoPasses = false): Promise<Session> {
  const session = await pool.openFor(uid, 'pdflatex');
  try {
    await writeFile(join(session.dir, `${FORMAT}.fmt`), format.fmt, { flag: 'wx' });
    if (session.uid !== undefined) await lchown(join(session.dir, `${FORMAT}.fmt`), session.uid, session.uid);
    await startFormatEngine(pool, session, format);
    if (twoPasses) await session.startNext();
    return session;
  } catch (err) {
    await pool.discard(session, true);
    throw err;
  }
}

export interface PrimedOptions {
  /** Most waiting sandboxes (0 turns priming off). */
  maxCount: number;
  /** A sandbox waiting longer is ended (default 10 minutes). */
  maxAgeMs?: number;
}

export interface PrimedStats {
  /** Jobs with a format that found a primed sandbox. */
  hits: number;
  /** Ended unused: the count or age bound, a refused format, or the service closing. */
  evictions: number;
}

interface Waiting {
  key: string;
  started: number;
  /** Null when it could not start. */
  session: Promise<Session | null>;
}

export class PrimedFormats {
  readonly stats: PrimedStats = { hits: 0, evictions: 0 };
  /** By `${uid}\n${key}`, at most one each; map order is start order (oldest first out). */
  private readonly waiting = new Map<string, Waiting>();
  private closed = false;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    /** The runner's sandboxes (TexRunner.pool). */
    private readonly pool: SandboxPool,
    private readonly options: PrimedOptions,
  ) {}

  /** The primed sandbox for `uid` and format `key`, taken (the caller runs its job in it and discards it), or null. */
  async take(uid: number | undefined, key: string): Promise<Session | null> {
    const slot = `${uid}\n${key}`;
    const waiting = this.waiting.get(slot);
    if (!waiting) return null;
    this.waiting.delete(slot);
    const session = await waiting.session;
    // Expired or dead while waiting: no use to a job.
    if (!session || !session.alive || performance.now() - waiting.started > this.maxAge) {
      if (session) await this.pool.discard(session, true);
      return null;
    }
    this.stats.hits++;
    return session;
  }

  /** Starts the next primed sandbox of format `key` for `uid`, within the count bound; `twoPasses`: with a second pass's engine. */
  replenish(uid: number | undefined, key: string, format: JobFormat, twoPasses = false): void {
    const slot = `${uid}\n${key}`;
    if (this.closed || this.options.maxCount <= 0 || this.waiting.has(slot)) return;
    for (const oldest of this.waiting.keys()) {
      if (this.waiting.size < this.options.maxCount) break;
      void this.end(oldest);
    }
    if (!this.sweeper) {
      this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, this.maxAge));
      this.sweeper.unref();
    }
    this.waiting.set(slot, { key, started: performance.now(), session: primeSandbox(this.pool, uid, format, twoPasses).catch(() => null) });
  }

  /** Ends every waiting sandbox of format `key` (refused or dropped by the cache). */
  forget(key: string): void {
    for (const [slot, waiting] of this.waiting) if (waiting.key === key) void this.end(slot);
  }

  /** Ends sandboxes waiting past their age. */
  async sweep(): Promise<void> {
    const now = performance.now();
    await Promise.all([...this.waiting].filter(([, w]) => now - w.started > this.maxAge).map(([slot]) => this.end(slot)));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.all([...this.waiting.keys()].map((slot) => this.end(slot)));
  }

  /** Waiting sandboxes now. */
  get size(): number {
    return this.waiting.size;
  }

  /** The waiting sandboxes, once started (tests). */
  sessions(): Promise<Array<Session | null>> {
    return Promise.all([...this.waiting.values()].map((w) => w.session));
  }

  private get maxAge(): number {
    return this.options.maxAgeMs ?? 10 * 60 * 1000;
  }

  private async end(slot: string): Promise<void> {
    const waiting = this.waiting.get(slot);
    if (!waiting) return;
    this.waiting.delete(slot);
    this.stats.evictions++;
    const session = await waiting.session;
    if (session) await this.pool.discard(session, true);
  }
}
