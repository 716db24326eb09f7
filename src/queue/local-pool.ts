// A bounded pool of sandboxed slots in this process, running TeX jobs and PDF merges. At most
// `concurrency` run; at most `queueLimit` wait, and no interactive job that would wait past
// `maxWaitMs`; beyond that the caller gets QueueFullError (503 server_busy at the door) at
// once rather than a long wait, with a Retry-After of the time the jobs ahead of it need
// (drain.ts). Waiting jobs get
// slots in fair order (fair-wait.ts): interactive first, callers in turn.
import { QueueFullError } from '../tex/errors.js';
import type { JobFairness, JobRunner, TexJob, TexResult } from '../tex/job.js';
import { DrainEstimate } from './drain.js';
import { FairWaitList } from './fair-wait.js';
import { mergePdfs } from '../tex/pdf/merge.js';
import { sandboxUid, slotUid } from '../tex/sandbox/uids.js';
import type { MergeJob, MergeResult, TexQueue } from './queue.js';


export class LocalTexPool implements TexQueue {
  private readonly free: number[];
  private readonly waiting = new FairWaitList<(slot: number) => void>();
  private readonly drain = new DrainEstimate();

  /** One runner per TeX image, by year; the first is the default. All share the slots. */
  private readonly runners: ReadonlyMap<string, JobRunner>;

  constructor(
    runners: JobRunner | ReadonlyMap<string, JobRunner>,
    private readonly concurrency: number,
    private readonly queueLimit: number,
    /** Whether merges run in bubblewrap (QUIRE_SANDBOX); the runner knows its own. */
    private readonly isolate = true,
    /** An interactive job that would wait longer for a slot (and two job lengths) is refused (0: only `queueLimit` bounds the wait). */
    private readonly maxWaitMs = 0,
  ) {
    this.free = Array.from({ length: concurrency }, (_, i) => i);
    this.runners = runners instanceof Map ? runners : new Map([['', runners as JobRunner]]);
  }

  async close(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.close()));
  }

  async start(): Promise<string[]> {
    return (await Promise.all([...this.runners.values()].map((runner) => runner.start()))).flat();
  }

  /** The runner of the job's TeX Live year (the service checked it is served), else the default. */
  private runnerFor(job: TexJob): JobRunner {
    return (job.texlive !== undefined ? this.runners.get(job.texlive) : undefined) ?? this.runners.values().next().value!;
  }

  stats() {
    return { running: this.concurrency - this.free.length, waiting: this.waiting.length };
  }

  run(job: TexJob): Promise<TexResult> {
    return this.inSlot((slot) => this.runnerFor(job).run(job, sandboxUid(slotUid(slot))), job.fairness);
  }

  /** A merge takes a slot like a TeX job, so a batch's merge cannot crowd out compiles. */
  merge(job: MergeJob): Promise<MergeResult> {
    return this.inSlot(() => mergePdfs(job.pdfs, { isolate: this.isolate, maxBytes: job.maxBytes }));
  }

  private async inSlot<T>(work: (slot: number) => Promise<T>, fairness?: JobFairness): Promise<T> {
    const slot = await this.acquire(fairness);
    const started = performance.now();
    try {
      return await work(slot);
    } finally {
      this.drain.observe(performance.now() - started);
      this.releaseSlot(slot);
    }
  }

  private acquire(fairness?: JobFairness): Promise<number> {
    // Least recently used first: the slot that finished longest ago has its sandbox warm.
    const slot = this.free.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    const ahead = this.waiting.ahead(fairness);
    const tooLong = this.maxWaitMs > 0 && !fairness?.background && this.drain.tooLong(ahead, this.concurrency, this.maxWaitMs);
    if (this.waiting.length >= this.queueLimit || tooLong) {
      return Promise.reject(new QueueFullError(this.drain.retryAfterSeconds(ahead, this.concurrency)));
    }
    return new Promise((resolve) => this.waiting.push(resolve, fairness));
  }

  private releaseSlot(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}
