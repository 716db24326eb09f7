// A bounded pool of TeX jobs behind a small interface, so jobs can later run on other
// machines. At most `concurrency` run; at most `queueLimit` wait; beyond that the caller
// gets QueueFullError (503 server_busy at the door) at once rather than an unbounded wait.
import { QueueFullError } from './errors.js';
import type { JobRunner, TexJob, TexResult } from './job.js';
import { sandboxUid } from './sandboxed.js';

export interface JobQueue {
  run(job: TexJob): Promise<TexResult>;
  stats(): { running: number; waiting: number };
  /** Throws when the queue cannot take work (its broker is unreachable); absent for the local pool. */
  ping?(): Promise<void>;
  /** Stops accepting work and ends idle sandboxes. */
  close(): Promise<void>;
  /** Before serving: removes workspaces left by services that died; resolves to what went. */
  start?(): Promise<string[]>;
}

/**
 * Each slot runs as its own unprivileged uid when the service is root, so RLIMIT_NPROC is per
 * job. The range is offset by the process id so that two services on one host (or parallel
 * test processes) do not share uids.
 */
export const SLOT_UID_BASE = 200_000;
const MAX_SLOTS = 256;
export const slotUid = (slot: number) => SLOT_UID_BASE + (process.pid % 1000) * MAX_SLOTS + slot;
const RETRY_AFTER_SECONDS = 5;

export class LocalJobQueue implements JobQueue {
  private readonly free: number[];
  private readonly waiting: Array<(slot: number) => void> = [];

  constructor(
    private readonly runner: JobRunner,
    private readonly concurrency: number,
    private readonly queueLimit: number,
  ) {
    this.free = Array.from({ length: concurrency }, (_, i) => i);
  }

  close(): Promise<void> {
    return this.runner.close();
  }

  start(): Promise<string[]> {
    return this.runner.start();
  }

  stats() {
    return { running: this.concurrency - this.free.length, waiting: this.waiting.length };
  }

  async run(job: TexJob): Promise<TexResult> {
    const slot = await this.acquire();
    try {
      return await this.runner.run(job, sandboxUid(slotUid(slot)));
    } finally {
      this.releaseSlot(slot);
    }
  }

  private acquire(): Promise<number> {
    // Least recently used first: the slot that finished longest ago has its sandbox warm.
    const slot = this.free.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    if (this.waiting.length >= this.queueLimit) {
      return Promise.reject(new QueueFullError(RETRY_AFTER_SECONDS));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private releaseSlot(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}
