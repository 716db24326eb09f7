// The worker side of QUIRE_QUEUE=bullmq: takes compile jobs from Redis, fetches their files
// from the blob store, runs them in the local sandboxed pool under the plan's timeout, and
// leaves the PDF and the result record in the blob store for the API node that waits.
import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { isServiceError } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import type { JobQueue } from '../tex/queue.js';
import {
  LOCK_MS,
  MAX_STALLED,
  QUEUE_NAME,
  STALLED_CHECK_MS,
  bullPrefix,
  pdfKey,
  resultKey,
  sha256,
  type RemoteJobData,
  type RemoteJobReturn,
  type StoredResult,
} from './remote-jobs.js';

/** Left for the result to reach the blob store and the API node before its deadline. */
const WRITE_MARGIN_MS = 2_000;

export interface WorkerDeps {
  blobs: BlobStore;
  /** The local sandboxed pool the jobs run in. */
  pool: Pick<JobQueue, 'run'>;
  log: Logger;
  clock?: Clock;
}

/** Runs one job's payload; exported apart from BullMQ so its rules are plain to test. */
export async function processJob(data: RemoteJobData, deps: WorkerDeps): Promise<RemoteJobReturn> {
  const clock = deps.clock ?? systemClock;
  const now = () => clock.ms();
  const budget = Math.min(data.timeoutMs, data.deadline - WRITE_MARGIN_MS - now());
  // The API node has stopped waiting (or will before we could finish): do nothing, keep nothing.
  if (budget <= 0) return { stored: false };

  const files: Array<{ name: string; data: Buffer }> = [];
  const missing: string[] = [];
  for (const file of data.files) {
    const bytes = await deps.blobs.get(file.key);
    if (bytes && sha256(bytes) === file.sha256) files.push({ name: file.name, data: bytes });
    else missing.push(file.name);
  }
  if (missing.length > 0) return store(deps, data, { kind: 'input_missing', names: missing }, now);

  let result;
  try {
    result = await deps.pool.run({
      source: data.source,
      compiler: data.compiler,
      files,
      timeoutMs: budget,
      ...(data.cpuSeconds !== undefined ? { cpuSeconds: data.cpuSeconds } : {}),
      maxFileBytes: data.maxFileBytes,
      ...(data.keepPages !== undefined ? { keepPages: data.keepPages } : {}),
      ...(data.preamble ? { preamble: data.preamble } : {}),
    });
  } catch (err) {
    if (!isServiceError(err)) throw err;
    return store(deps, data, { kind: 'refused', code: err.code, message: err.message, details: err.details }, now);
  }
  // Stopped by the shortened budget, not by the plan's timeout: the caller is gone or going.
  if (result.outcome === 'timeout' && budget < data.timeoutMs) return { stored: false };

  if (result.pdf) await deps.blobs.put(pdfKey(data.prefix), result.pdf);
  const { pdf: _pdf, ...rest } = result;
  return store(deps, data, { kind: 'ran', ...rest }, now);
}

async function store(deps: WorkerDeps, data: RemoteJobData, result: StoredResult, now: () => number): Promise<RemoteJobReturn> {
  if (now() > data.deadline) {
    await deps.blobs.delete(pdfKey(data.prefix));
    return { stored: false };
  }
  await deps.blobs.put(resultKey(data.prefix), Buffer.from(JSON.stringify(result)));
  return { stored: true };
}

export interface CompileWorkerOptions extends WorkerDeps {
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
}

export interface CompileWorker {
  worker: Worker<RemoteJobData, RemoteJobReturn>;
  /** Waits for running jobs, then closes the connections. */
  close(): Promise<void>;
}

/** A BullMQ worker over the compile queue. Connection trouble is logged and retried, never fatal. */
export function startCompileWorker(options: CompileWorkerOptions): CompileWorker {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const worker = new Worker<RemoteJobData, RemoteJobReturn>(
    QUEUE_NAME,
    async (job: Job<RemoteJobData, RemoteJobReturn>) => {
      const started = clock.ms();
      log.info({ job: job.id, attempt: job.attemptsStarted }, 'compile job started');
      let returned;
      try {
        returned = await processJob(job.data, options);
      } catch (err) {
        // The reason BullMQ keeps and broadcasts must not carry anything of the document.
        log.error({ job: job.id, err }, 'compile job: worker error');
        throw new Error('the worker could not run the job (see its log)');
      }
      // The job's id and timings only: never the source or the log.
      log.info({ job: job.id, attempt: job.attemptsStarted, ms: clock.ms() - started, stored: returned.stored }, 'compile job');
      return returned;
    },
    {
      connection,
      prefix: bullPrefix(options.redisPrefix),
      concurrency: options.concurrency,
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      maxStalledCount: MAX_STALLED,
      name: `${hostname()}:${process.pid}`,
      // Finished jobs leave Redis at once, whatever the job itself asked for.
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    },
  );
  worker.on('error', (err) => log.warn({ err: { message: err.message } }, 'compile worker: redis'));
  worker.on('failed', (job, err) => log.error({ job: job?.id, err: { message: err.message } }, 'compile job failed'));
  return {
    worker,
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
