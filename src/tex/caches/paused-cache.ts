// Paused preambles for xelatex and lualatex (issue 27), and for pdflatex's PDF/A jobs (issue
// 23: pdfx cannot go into a dumped format), as a layer around the job runners: a
// job whose preamble (per scope, engine, preamble bytes, TeX Live and day) was delivered
// before, and verified, takes a TeX process that already ran that preamble and waits at
// \begin{document} (paused.ts) in a fresh sandbox of its slot's uid; that sandbox is the
// job's and is never used again. The first delivery of a preamble only counts it; the second
// has one built, off the request path, and verified: the same job runs again from it and must
// give the cold compile's pages and text. Anything doubtful from a paused process runs again
// cold, silently (counted in `fallbacks`). Bounded in count, memory (resident bytes of the
// waiting processes) and age.
import { availableParallelism } from 'node:os';
import type { Compiler } from '../compilers.js';
import type { JobRunner, TexJob, TexResult } from '../job.js';
import { outputFiles, outputSource } from '../output/source.js';
import { bodyFilesOnly, pausedRefusal, pauseSandbox } from './paused.js';
import { pdfTexts } from '../pdf/pdftext.js';
import { preambleKey, splitPreamble } from './preamble.js';
import { doubtful, TexliveRefresh } from './trust.js';
import { treeUsage } from '../sandbox/proctree.js';
import type { TexRunner } from '../runner.js';
import type { Session } from '../sandbox/session.js';
import { MAIN } from '../sandbox/workspace.js';

/** What the layer needs of the runner: runs (from a paused sandbox), and its sandboxes to pause preambles in. */
export type PausedRunner = Pick<TexRunner, 'run' | 'pool'>;

export interface PausedStats {
  /** Jobs whose first pass a paused preamble ran. */
  hits: number;
  /** Jobs of a verified preamble that found none waiting (they run cold; one is started). */
  misses: number;
  /** Paused processes started (verifications included). */
  builds: number;
  /** Preambles refused after a verification that differed, or a paused run that failed where a cold one delivered. */
  rejections: number;
  /** Paused runs that ended cold (the process was gone, or its outcome was doubtful). */
  fallbacks: number;
  /** Waiting processes ended for the count, memory or age bounds. */
  evictions: number;
  /** Waiting processes now, and their resident bytes at the last sweep. */
  waiting: number;
  bytes: number;
}

export function pausedStats(): PausedStats {
  return { hits: 0, misses: 0, builds: 0, rejections: 0, fallbacks: 0, evictions: 0, waiting: 0, bytes: 0 };
}

export interface PausedOptions {
  /** Most waiting processes (0 turns paused preambles off). */
  maxCount: number;
  /** Most resident bytes of them all; past it the least recently made go. */
  maxBytes: number;
  /** A process waiting longer is ended (default 10 minutes). */
  maxAgeMs?: number;
  /** Run pdftotext (the verification) in bubblewrap. */
  isolate: boolean;
  /** The TeX image the runner's jobs run in (its identity is in every key); none: the host's. */
  root: string | undefined;
  stats?: PausedStats;
  /** How often waiting processes are measured (default 2 s). */
  sweepMs?: number;
}

/** CPU seconds a preamble may spend before its process counts as a runaway and goes. */
const PREAMBLE_CPU_SECONDS = 30;
const KNOWN_KEYS = 4096;

interface Lookup {
  key: string;
  compiler: Compiler;
  preamble: string;
  lines: number;
  /** Files the preamble reads that are the service's, not the job's (pdfx's .xmpdata). */
  files: Array<{ name: string; data: Buffer }>;
}

interface Known {
  seen: number;
  verified: boolean;
  refused: boolean;
}

interface Waiting {
  key: string;
  compiler: Compiler;
  uid: number | undefined;
  /** Null when it could not start. */
  session: Promise<Session | null>;
  ready?: Session | null;
  started: number;
  rss: number;
}

export class PausedPreambles implements JobRunner {
  readonly stats: PausedStats;
  private readonly known = new Map<string, Known>();
  /** By `${uid}\n${key}`, at most one each; map order is start order (oldest first out). */
  private readonly waiting = new Map<string, Waiting>();
  private active = 0;
  private closed = false;
  private verifying: Promise<void> | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly texliveId: TexliveRefresh;

  constructor(
    private readonly inner: JobRunner,
    private readonly runner: PausedRunner,
    private readonly options: PausedOptions,
  ) {
    this.stats = options.stats ?? pausedStats();
    this.texliveId = new TexliveRefresh(options.root);
  }

  start(): Promise<string[]> {
    if (this.options.maxCount > 0 && !this.sweeper) {
      this.sweeper = setInterval(() => void this.sweep().catch(() => {}), this.options.sweepMs ?? 2000);
      this.sweeper.unref();
    }
    return this.inner.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await this.verifying;
    await Promise.all([...this.waiting.keys()].map((slot) => this.end(slot)));
    await this.inner.close();
  }

  /** Resolves when no verification runs and every waiting process has started (tests). */
  async idle(): Promise<void> {
    while (this.verifying) await this.verifying;
    await Promise.all([...this.waiting.values()].map((w) => w.session));
  }

  /** The waiting sandboxes (tests). */
  sessions(): Array<{ uid: number | undefined; compiler: Compiler; session: Session | null | undefined }> {
    return [...this.waiting.values()].map((w) => ({ uid: w.uid, compiler: w.compiler, session: w.ready }));
  }

  async run(job: TexJob, uid?: number): Promise<TexResult> {
    const look = await this.lookup(job);
    if (!look) return this.inner.run(job, uid);
    this.active++;
    try {
      const known = this.known.get(look.key);
      if (known?.verified) {
        const slot = `${uid}\n${look.key}`;
        const waiting = this.waiting.get(slot);
        this.waiting.delete(slot);
        this.stats.waiting = this.waiting.size;
        if (waiting) this.stats.hits++;
        else this.stats.misses++;
        const result = waiting ? await this.runPaused(job, uid, waiting, look) : await this.inner.run(job, uid);
        if (this.known.get(look.key)?.verified) this.replenish(uid, look);
        return result;
      }
      const cold = await this.inner.run(job, uid);
      if (cold.outcome === 'ok') this.delivered(job, uid, look, cold);
      return cold;
    } finally {
      this.active--;
    }
  }

  /** The job from its paused process; what may be the process's fault runs again cold. */
  private async runPaused(job: TexJob, uid: number | undefined, waiting: Waiting, look: Lookup): Promise<TexResult> {
    const started = performance.now();
    const session = await waiting.session;
    const result = session ? await this.runner.run(job, uid, { from: 'paused', session }).catch(() => null) : null;
    if (result && !doubtful(result, look.lines)) {
      // The driver ran the pass cold when the paused process was gone: right, but no hit.
      if (result.warm !== 'paused') this.stats.fallbacks++;
      return result;
    }
    this.stats.fallbacks++;
    const spent = performance.now() - started;
    const cold = await this.inner.run({ ...job, timeoutMs: Math.max(1000, job.timeoutMs - spent) }, uid);
    if (cold.outcome === 'ok' && result?.warm === 'paused') this.refuse(look.key);
    return { ...cold, durationMs: Math.round(performance.now() - started) };
  }

  /**
   * A cold delivery: the second of a preamble has one process built and verified, off the
   * request path, one at a time and only while a core is free.
   */
  private delivered(job: TexJob, uid: number | undefined, look: Lookup, cold: TexResult): void {
    const known = this.known.get(look.key) ?? { seen: 0, verified: false, refused: false };
    known.seen++;
    this.remember(look.key, known);
    if (known.seen < 2 || known.refused || known.verified || this.verifying || this.closed || this.active > availableParallelism() - 1) return;
    this.verifying = this.verify(job, uid, look, cold)
      .then((same) => {
        if (same) {
          known.verified = true;
          this.replenish(uid, look);
        } else this.refuse(look.key);
      })
      .catch(() => this.refuse(look.key))
      .finally(() => (this.verifying = null));
  }

  /** The same job from a paused process: ok, the paused pass really ran, the same pages and text. */
  private async verify(job: TexJob, uid: number | undefined, look: Lookup, cold: TexResult): Promise<boolean> {
    this.stats.builds++;
    const session = await pauseSandbox(this.runner.pool, uid, job.compiler, look.preamble, look.lines, look.files);
    const again = await this.runner.run(job, uid, { from: 'paused', session });
    if (again.outcome !== 'ok' || again.warm !== 'paused' || again.totalPages !== cold.totalPages || !again.pdf || !cold.pdf) return false;
    const texts = await pdfTexts([again.pdf, cold.pdf], this.options.isolate, this.options.root);
    return texts !== null && texts[0] === texts[1];
  }

  /** Starts the next paused process of `look` for `uid`, within the count bound. */
  private replenish(uid: number | undefined, look: Lookup): void {
    const slot = `${uid}\n${look.key}`;
    if (this.closed || this.options.maxCount <= 0 || this.waiting.has(slot)) return;
    for (const oldest of this.waiting.keys()) {
      if (this.waiting.size < this.options.maxCount) break;
      this.stats.evictions++;
      void this.end(oldest);
    }
    this.stats.builds++;
    const waiting: Waiting = {
      key: look.key,
      compiler: look.compiler,
      uid,
      started: performance.now(),
      rss: 0,
      session: pauseSandbox(this.runner.pool, uid, look.compiler, look.preamble, look.lines, look.files).catch(() => null),
    };
    // Evicted meanwhile, it is ended by end(), which waits for it; taken, the job ends it.
    void waiting.session.then((session) => (waiting.ready = session));
    this.waiting.set(slot, waiting);
    this.stats.waiting = this.waiting.size;
  }

  /** Ends the waiting process at `slot`. */
  private async end(slot: string): Promise<void> {
    const waiting = this.waiting.get(slot);
    if (!waiting) return;
    this.waiting.delete(slot);
    this.stats.waiting = this.waiting.size;
    const session = await waiting.session;
    if (session) await this.runner.pool.discard(session, true);
  }

  /** Measures the waiting processes: too old, a runaway preamble, dead, or over the memory budget go. */
  private async sweep(): Promise<void> {
    const ready = [...this.waiting.entries()].filter(([, w]) => w.ready !== undefined);
    const usage = await treeUsage(ready.flatMap(([, w]) => (w.ready?.pid !== undefined ? [w.ready.pid] : [])));
    const maxAge = this.options.maxAgeMs ?? 10 * 60 * 1000;
    for (const [slot, w] of ready) {
      const use = w.ready?.pid !== undefined ? usage.get(w.ready.pid) : undefined;
      const dead = !w.ready || !w.ready.alive || !use || use.processes.length === 0;
      if (dead || performance.now() - w.started > maxAge || use.cpuSeconds > PREAMBLE_CPU_SECONDS) {
        if (!dead) this.stats.evictions++;
        await this.end(slot);
      } else w.rss = use.rssBytes;
    }
    let total = [...this.waiting.values()].reduce((sum, w) => sum + w.rss, 0);
    for (const [slot, w] of this.waiting) {
      if (total <= this.options.maxBytes) break;
      total -= w.rss;
      this.stats.evictions++;
      await this.end(slot);
    }
    this.stats.bytes = total;
  }

  private refuse(key: string): void {
    const known = this.known.get(key) ?? { seen: 0, verified: false, refused: false };
    if (!known.refused) this.stats.rejections++;
    known.refused = true;
    known.verified = false;
    this.remember(key, known);
    for (const [slot, w] of this.waiting) if (w.key === key) void this.end(slot);
  }

  private remember(key: string, known: Known): void {
    this.known.delete(key);
    this.known.set(key, known);
    for (const oldest of this.known.keys()) {
      if (this.known.size <= KNOWN_KEYS) break;
      this.known.delete(oldest);
    }
  }

  /**
   * The job's preamble key, or null when it cannot use a paused preamble: no scope, an output
   * step other than pdflatex's PDF/A, no
   * \begin{document} line, a refused preamble, a file the preamble might have looked for, or an
   * unknown TeX Live. pdflatex pauses only for PDF/A, which the format cache refuses (pdfx
   * writes PDF objects while it loads): its preamble is the one the output step makes, and the
   * .xmpdata pdfx reads is part of the key.
   */
  private async lookup(job: TexJob): Promise<Lookup | null> {
    if (this.options.maxCount <= 0 || !job.preamble || !bodyFilesOnly(job.files ?? [])) return null;
    // A tagged job (\DocumentMetadata before \documentclass, tagging.ts) is not paused: its first line is not the class.
    const pdfa = job.compiler === 'pdflatex' && job.output?.pdfStandard !== undefined && !job.output.attachments?.length && !job.output.tagging;
    // Another output step would be verified on its post-processed PDF (an encrypted one has no text).
    if (job.compiler === 'pdflatex' ? !pdfa : job.output !== undefined) return null;
    const source = pdfa ? outputSource(job.source, job.output!, job.compiler) : job.source;
    const split = source === null ? null : splitPreamble(source);
    if (!split || pausedRefusal(split.preamble, (job.files ?? []).map((file) => file.name)) !== null) return null;
    const texlive = (await this.texliveId.get())?.id ?? null;
    if (texlive === null) return null;
    const files = pdfa ? outputFiles(job.output!, MAIN) : [];
    const read = files.map((file) => `\n%${file.name}:${file.data.toString('base64')}`).join('');
    const key = preambleKey({ ...job.preamble, engine: job.compiler, preamble: split.preamble + read, texlive });
    return { key, compiler: job.compiler, preamble: split.preamble, lines: split.lines, files };
  }
}
