// The API side of QUIRE_QUEUE=bullmq: the TexQueue the compile pipeline calls, with TeX (and
// a batch's PDF merge) run by `quire worker` processes instead of this one. A TeX job's files
// go to the blob store (a stored asset is referenced where it already is), the TeX job goes to
// Redis, and the node waits for the worker's result in the blob store. Whatever happens, the
// TeX job's blobs are deleted before run() returns; quota stays with the caller (the pipeline
// charges it on acceptance), so a TeX job that ran twice after a worker died is charged once.
import { serverBusy } from './domain.js';
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { restore, ServiceError, type ErrorCode } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import { storageFault, unavailable } from '../storage/faults.js';
import type { TexJob, TexResult } from '../tex/job.js';
import type { MergeJob, MergeResult, TexQueue } from './queue.js';
import { fairPriority } from './fair-wait.js';
import { guarded, redisOptions } from './redis.js';
import {
  ATTEMPTS,
  COMPILE,
  MERGE,
  MERGE_MS,
  QUEUE_NAME,
  QUEUE_WAIT_MS,
  TRANSFER_MS,
  bullPrefix,
  inputKey,
  jobPrefix,
  pdfKey,
  resultKey,
  sha256,
  type RemoteFile,
  type RemoteJobData,
  type RemoteJobReturn,
  type RemoteMergeData,
  type StoredResult,
  encodeOutput,
  outputKey,
  pageImageKey,
} from './contract.js';

const RETRY_AFTER_SECONDS = 5;
/** Most page images a job leaves under its prefix (compile/output.ts caps a request at 100). */
const MAX_PAGE_IMAGES = 100;
/** How often a waiting node looks for the result itself, in case the completion event was lost. */
const POLL_MS = 1_000;
const CLOSE_MS = 2_000;

export interface BullQueueOptions {
  redisUrl: string;
  redisPrefix: string;
  blobs: BlobStore;
  /** Jobs allowed to wait in the shared queue before callers get 503 server_busy. */
  queueLimit: number;
  log: Logger;
  /**
   * Where deadlines are read; the system clock unless given. A job's deadline is an instant the
   * worker processes read from their own clocks, so outside tests it must be the system clock.
   */
  clock?: Clock;
  /** Overrides for tests. */
  queueWaitMs?: number;
}

function busy(message: string): ServiceError {
  return serverBusy(message, RETRY_AFTER_SECONDS);
}

/** The compile queue can't be reached: Redis is down, like any dependency outage a retryable 503. */
function queueDown(err: unknown): ServiceError {
  return unavailable('redis', err);
}

export class BullTexQueue implements TexQueue {
  private readonly queue: Queue<RemoteJobData | RemoteMergeData, RemoteJobReturn>;
  /** Completion events, listened to from the first time Redis answers (see listen()). */
  private events: QueueEvents | null = null;
  private readonly waiters = new Map<string, () => void>();
  private readonly cleaning = new Set<Promise<void>>();
  /** Fails at once while Redis is down instead of queueing commands until it returns. */
  private readonly connection: Redis;
  private lastWaiting = 0;
  /** Jobs of each caller waiting from this node: the next one's BullMQ priority (fair-wait.ts). */
  private readonly turns = new Map<string, number>();
  private closed = false;
  private readonly clock: Clock;

  constructor(private readonly options: BullQueueOptions) {
    this.clock = options.clock ?? systemClock;
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.connection.on('error', () => {});
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, prefix: bullPrefix(options.redisPrefix), streams: { events: { maxLen: 1000 } } });
    this.queue.on('error', (err: Error) => options.log.warn({ err: { message: err.message } }, 'compile queue: redis'));
    this.connection.once('ready', () => this.listen());
  }

  /**
   * Completion and failure only wake the waiter; the result itself is read from the blob
   * store, and a waiter also looks every POLL_MS, so a lost event costs at most that. Started
   * once Redis has answered: BullMQ cannot close a QueueEvents whose connection never came up.
   */
  private listen(): void {
    if (this.closed) return;
    this.events = new QueueEvents(QUEUE_NAME, { connection: redisOptions(this.options.redisUrl), prefix: bullPrefix(this.options.redisPrefix) });
    this.events.on('error', (err: Error) => this.options.log.warn({ err: { message: err.message } }, 'compile queue: events'));
    const wake = ({ jobId }: { jobId: string }) => this.waiters.get(jobId)?.();
    this.events.on('completed', wake);
    this.events.on('failed', wake);
  }

  stats() {
    return { running: this.waiters.size, waiting: this.lastWaiting };
  }

  /** Throws when the queue cannot take work: Redis unreachable, or no worker connected to it. */
  async ping(): Promise<void> {
    const [waiting, workers] = await this.redis(() => Promise.all([this.queue.getJobCountByTypes('waiting', 'prioritized'), this.queue.getWorkersCount()]));
    this.lastWaiting = waiting;
    if (workers === 0) throw new Error('no compile worker is connected to the queue');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiters.values()) wake();
    await Promise.allSettled([...this.cleaning]);
    // Bounded: BullMQ's close can wait on a connection that is down. Never connected: nothing to close.
    if (this.events) {
      const closing = Promise.allSettled([this.events.close(), this.queue.close()]);
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref())]);
    }
    this.connection.disconnect();
  }

  async run(job: TexJob): Promise<TexResult> {
    await this.admit();
    const caller = job.fairness?.caller ?? '';

    const id = randomUUID();
    const prefix = jobPrefix(id);
    const uploaded = new Set<string>();
    try {
      let files = await this.inputs(job, prefix, uploaded, false);
      if (job.output) {
        uploaded.add(outputKey(prefix));
        // The worker leaves the page images under the prefix too: cleaned with the job.
        if (job.output.pageImages) for (let page = 1; page <= MAX_PAGE_IMAGES; page++) uploaded.add(pageImageKey(prefix, page));
        await this.blobStore(() => this.options.blobs.put(outputKey(prefix), encodeOutput(job.output!)));
      }
      const deadline = this.clock.ms() + (this.options.queueWaitMs ?? QUEUE_WAIT_MS) + job.timeoutMs + TRANSFER_MS;
      const data: RemoteJobData = {
        source: job.source,
        compiler: job.compiler,
        files,
        timeoutMs: job.timeoutMs,
        ...(job.cpuSeconds !== undefined ? { cpuSeconds: job.cpuSeconds } : {}),
        maxFileBytes: job.maxFileBytes,
        ...(job.keepPages !== undefined ? { keepPages: job.keepPages } : {}),
        ...(job.maxPasses !== undefined ? { maxPasses: job.maxPasses } : {}),
        ...(job.continueOnError ? { continueOnError: true as const } : {}),
        ...(job.preamble ? { preamble: job.preamble } : {}),
        ...(job.output ? { output: true as const } : {}),
        ...(job.fairness?.yields ? { yields: true as const } : {}),
        deadline,
        prefix,
      };
      const priority = fairPriority(this.turns.get(caller) ?? 0, job.fairness?.background === true);
      this.turns.set(caller, (this.turns.get(caller) ?? 0) + 1);
      let result = await this.execute(`${id}`, COMPILE, data, job.signal, priority);
      if (result.kind === 'input_missing') {
        // A stored asset vanished between resolution and the worker: send our copies instead.
        await this.options.blobs.delete(resultKey(prefix));
        files = await this.inputs(job, prefix, uploaded, true);
        result = await this.execute(`${id}-2`, COMPILE, { ...data, files }, job.signal, priority);
      }
      return await this.accept(result, prefix);
    } finally {
      const left = (this.turns.get(caller) ?? 1) - 1;
      if (left > 0) this.turns.set(caller, left);
      else this.turns.delete(caller);
      this.cleanLater(prefix, uploaded);
    }
  }

  /** The merge runs on a worker like a TeX job: its PDFs travel through the blob store. */
  async merge(job: MergeJob): Promise<MergeResult> {
    await this.admit();
    const id = randomUUID();
    const prefix = jobPrefix(id);
    const uploaded = new Set<string>();
    try {
      const files = await this.inputs({ files: job.pdfs.map((data, i) => ({ name: `in-${i}.pdf`, data })) }, prefix, uploaded, true);
      const deadline = this.clock.ms() + (this.options.queueWaitMs ?? QUEUE_WAIT_MS) + MERGE_MS + TRANSFER_MS;
      const result = await this.execute(id, MERGE, { files, maxBytes: job.maxBytes, deadline, prefix });
      if (result.kind === 'merge_failed') throw new Error('qpdf could not merge the PDFs (see the worker log)');
      if (result.kind !== 'merged') throw busy('The PDF merge was lost (a worker or the queue failed); retry shortly.');
      const pdf = await this.blobStore(() => this.options.blobs.get(pdfKey(prefix)));
      if (!pdf) throw busy('The merged PDF could not be read back from storage; retry shortly.');
      return { pdf, pages: result.pages };
    } finally {
      this.cleanLater(prefix, uploaded);
    }
  }

  /** Refuses work while closing, while Redis is down, and when the shared queue is full. */
  private async admit(): Promise<void> {
    if (this.closed) throw busy('This node is shutting down; retry shortly.');
    let waiting;
    try {
      waiting = await this.redis(() => this.queue.getJobCountByTypes('waiting', 'prioritized'));
    } catch (err) {
      throw queueDown(err);
    }
    this.lastWaiting = waiting;
    if (waiting >= this.options.queueLimit) {
      throw busy('Every compile worker is busy and the queue is full; retry shortly.');
    }
  }

  /** Deletes a TeX job's blobs off the caller's path (deletes are idempotent); close() waits for them. */
  private cleanLater(prefix: string, uploaded: Set<string>): void {
    const cleaning = this.cleanup(prefix, uploaded);
    this.cleaning.add(cleaning);
    void cleaning.finally(() => this.cleaning.delete(cleaning));
  }

  /** Puts the job's files where workers fetch them; `copyAll` ignores stored-asset references. */
  private async inputs(job: Pick<TexJob, 'files'>, prefix: string, uploaded: Set<string>, copyAll: boolean): Promise<RemoteFile[]> {
    const files: RemoteFile[] = [];
    for (const file of job.files ?? []) {
      const sum = sha256(file.data);
      if (file.blob && !copyAll) {
        files.push({ name: file.name, key: file.blob, sha256: sum });
        continue;
      }
      const key = inputKey(prefix, sum);
      if (!uploaded.has(key)) {
        uploaded.add(key);
        await this.blobStore(() => this.options.blobs.put(key, file.data));
      }
      files.push({ name: file.name, key, sha256: sum });
    }
    return files;
  }

  /** Enqueues one TeX job and waits for its result record, the deadline, or the job's loss. */
  private async execute(id: string, name: string, data: RemoteJobData | RemoteMergeData, signal?: AbortSignal, priority = fairPriority(0, false)): Promise<StoredResult | { kind: 'gone' }> {
    try {
      await this.redis(() => this.queue.add(name, data, {
        jobId: id,
        attempts: ATTEMPTS,
        priority,
        // The source must not outlive the job.
        removeOnComplete: true,
        removeOnFail: true,
      }));
    } catch (err) {
      throw queueDown(err);
    }
    try {
      return await this.await(id, data, signal);
    } finally {
      // Drop a job nobody took (deadline, abort): it holds the source. An active one is
      // skipped by BullMQ; its worker sees the deadline and keeps nothing.
      await this.redis(() => this.queue.remove(id)).catch(() => {});
    }
  }

  private await(id: string, data: RemoteJobData | RemoteMergeData, signal?: AbortSignal): Promise<StoredResult | { kind: 'gone' }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let checking = false;
      const finish = (outcome: () => Promise<StoredResult | { kind: 'gone' } | null>) => {
        if (settled || checking) return;
        checking = true;
        outcome()
          .then((value) => {
            checking = false;
            if (value === null || settled) return;
            settled = true;
            stop();
            resolve(value);
          })
          .catch((err: unknown) => {
            checking = false;
            if (settled) return;
            settled = true;
            stop();
            reject(err);
          });
      };
      const look = () =>
        finish(async () => {
          if (this.closed) throw busy('This node is shutting down; retry shortly.');
          if (signal?.aborted) return { kind: 'ran', outcome: 'timeout', log: '', passes: 0, durationMs: 0 } satisfies StoredResult;
          const found = await this.readResult(data.prefix);
          if (found) return found;
          if (this.clock.ms() > data.deadline) throw busy('The compile workers did not finish this job in time; retry shortly.');
          // Finished without a result (it failed, or its worker gave up), or lost with Redis's data.
          const state = await this.redis(() => this.queue.getJobState(id)).catch(() => 'unreachable');
          if (state === 'unknown' || state === 'failed' || state === 'completed') {
            return (await this.readResult(data.prefix)) ?? { kind: 'gone' };
          }
          return null;
        });
      const timer = setInterval(look, POLL_MS);
      const deadline = setTimeout(look, Math.max(0, data.deadline - this.clock.ms()) + 10);
      const onAbort = () => look();
      signal?.addEventListener('abort', onAbort, { once: true });
      const stop = () => {
        clearInterval(timer);
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(id);
      };
      this.waiters.set(id, look);
    });
  }

  private async readResult(prefix: string): Promise<StoredResult | null> {
    const raw = await this.blobStore(() => this.options.blobs.get(resultKey(prefix)));
    return raw ? (JSON.parse(raw.toString('utf8')) as StoredResult) : null;
  }

  private async accept(result: StoredResult | { kind: 'gone' }, prefix: string): Promise<TexResult> {
    switch (result.kind) {
      case 'gone':
        throw busy('The compile job was lost (a worker or the queue failed); retry shortly.');
      case 'input_missing':
        throw busy('The compile workers could not read this job\'s files; retry shortly.');
      case 'refused':
        throw restore(result.code as ErrorCode, result.message, result.details);
      case 'merged':
      case 'merge_failed':
        throw new Error(`a compile came back as a merge result (${result.kind})`);
      case 'ran': {
        const { kind: _kind, pageImages, ...ran } = result;
        if (ran.outcome !== 'ok') return ran;
        const pdf = await this.blobStore(() => this.options.blobs.get(pdfKey(prefix)));
        if (!pdf) throw busy('The compiled PDF could not be read back from storage; retry shortly.');
        const rest = ran;
        if (!pageImages) return { ...rest, pdf };
        const images = [];
        for (const image of pageImages) {
          const png = await this.blobStore(() => this.options.blobs.get(pageImageKey(prefix, image.page)));
          if (!png) throw busy('A page image could not be read back from storage; retry shortly.');
          images.push({ ...image, png });
        }
        return { ...rest, pdf, pageImages: images };
      }
    }
  }

  private async cleanup(prefix: string, uploaded: Set<string>): Promise<void> {
    const keys = [...uploaded, pdfKey(prefix), resultKey(prefix)];
    await Promise.all(keys.map((key) => this.options.blobs.delete(key))).catch((err: unknown) =>
      this.options.log.warn({ err: { message: (err as Error).message }, prefix }, 'compile queue: job blobs left behind'),
    );
  }

  private redis<T>(op: () => Promise<T>): Promise<T> {
    return guarded(this.connection, op);
  }

  /** Blob store trouble on the job's path is retryable for the caller. */
  private async blobStore<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      this.options.log.warn({ err: { message: (err as Error).message } }, 'compile queue: blob store');
      throw storageFault(err) ?? unavailable('blob_store', err);
    }
  }
}
