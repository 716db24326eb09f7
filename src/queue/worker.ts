// The worker side of QUIRE_QUEUE=bullmq: a BullMQ worker that takes TeX jobs (compiles and
// batch merges) from Redis and hands each payload to process.ts, which runs it in the local
// sandboxed pool and leaves the output in the blob store for the API node that waits.
import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { systemClock } from '../clock.js';
import { LOCK_MS, MAX_STALLED, MERGE, QUEUE_NAME, STALLED_CHECK_MS, bullPrefix, type RemoteJobData, type RemoteJobReturn, type RemoteMergeData } from './contract.js';
import { processJob, processMerge, type WorkerDeps } from './process.js';

export { processJob, processMerge, type WorkerDeps } from './process.js';

type Payload = RemoteJobData | RemoteMergeData;

export interface CompileWorkerOptions extends WorkerDeps {
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
  log: Logger;
  /** Told when each TeX job starts and ends (the worker's /health and /metrics). */
  activity?: WorkerActivity;
}

/** What the worker reports of its jobs: `name` is the BullMQ job name (a compile or a merge). */
export interface WorkerActivity {
  started(name: string): void;
  ended(name: string, seconds: number, ok: boolean): void;
}

export interface CompileWorker {
  worker: Worker<Payload, RemoteJobReturn>;
  /** The queue's Redis connection state (ioredis: `ready` when commands go through). */
  connection(): string;
  /** Waits for running TeX jobs, then closes the connections. */
  close(): Promise<void>;
}

/** A BullMQ worker over the compile queue. Connection trouble is logged and retried, never fatal. */
export function startCompileWorker(options: CompileWorkerOptions): CompileWorker {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const worker = new Worker<Payload, RemoteJobReturn>(
    QUEUE_NAME,
    async (job: Job<Payload, RemoteJobReturn>) => {
      const started = clock.ms();
      log.info({ job: job.id, name: job.name, attempt: job.attemptsStarted }, 'compile job started');
      let returned;
      options.activity?.started(job.name);
      try {
        returned = job.name === MERGE ? await processMerge(job.data as RemoteMergeData, options) : await processJob(job.data as RemoteJobData, options);
      } catch (err) {
        options.activity?.ended(job.name, (clock.ms() - started) / 1000, false);
        // The reason BullMQ keeps and broadcasts must not carry anything of the document.
        log.error({ job: job.id, err }, 'compile job: worker error');
        throw new Error('the worker could not run the job (see its log)');
      }
      options.activity?.ended(job.name, (clock.ms() - started) / 1000, true);
      // The TeX job's id and timings only: never the source or the log.
      log.info({ job: job.id, name: job.name, attempt: job.attemptsStarted, ms: clock.ms() - started, stored: returned.stored }, 'compile job');
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
      // Finished TeX jobs leave Redis at once, whatever the job itself asked for.
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    },
  );
  worker.on('error', (err) => log.warn({ err: { message: err.message } }, 'compile worker: redis'));
  worker.on('failed', (job, err) => log.error({ job: job?.id, err: { message: err.message } }, 'compile job failed'));
  return {
    worker,
    connection: () => connection.status,
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
