// `quire worker`: a compile worker for QUIRE_QUEUE=bullmq. Same configuration as the API
// nodes; it runs the sandboxed TeX pool (QUIRE_COMPILE_CONCURRENCY jobs at once) and nothing
// else: no API, no database; only its own /health and /metrics on QUIRE_WORKER_PORT
// (worker-status.ts). SIGTERM lets running jobs finish, then exits.
import { systemClock } from './clock.js';
import { startCompileWorker } from './queue/worker.js';
import { createLogger } from './log.js';
import { watchValidators } from './metrics.js';
import { domainQueue } from './queue/domain.js';
import { blobStore, localCompilePool } from './services.js';
import { configOrExit, requireSandbox } from './startup.js';
import { probeEngines } from './tex/image/engines.js';
import { servedImages } from './tex/image/store.js';
import { validatorStats } from './tex/output/warm-validator.js';
import { WorkerStatus } from './worker-status.js';

/** Runs until SIGTERM or SIGINT; resolves with the exit code. */
export async function runWorker(): Promise<number> {
  const config = configOrExit();
  const log = createLogger(config.logLevel);
  if (config.queue !== 'bullmq' || !config.redisUrl) {
    console.error('quire worker: set QUIRE_QUEUE=bullmq and QUIRE_REDIS_URL (the same as the API nodes)');
    return 2;
  }
  requireSandbox(config, log);
  // The runner (and its warm PDF/A validators) runs here: their counts are on this /metrics.
  const validations = validatorStats();
  const pool = domainQueue(localCompilePool(config, undefined, undefined, validations));
  const cleanups: Array<() => Promise<void> | void> = [];
  const engines = await probeEngines(servedImages(config)[0]?.root);
  // The worker is started just below; health is asked only once it listens.
  const status: WorkerStatus = new WorkerStatus(
    { engines, connection: () => worker.connection(), concurrency: config.compileConcurrency, sandbox: config.sandbox },
    systemClock,
  );
  watchValidators(status.registry, validations);
  const worker = startCompileWorker({
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    concurrency: config.compileConcurrency,
    blobs: await blobStore(config, cleanups),
    pool,
    log,
    activity: status,
  });
  // A port in use (another worker on this host) leaves the worker compiling, unwatched: said loudly.
  const port = await status.listen(config.workerPort, config.host).catch((err: Error) => {
    log.error({ err: err.message, port: config.workerPort }, 'worker health and metrics not served: set QUIRE_WORKER_PORT to a free port (0 picks one)');
    return null;
  });
  if (port !== null) log.info({ port, health: `http://${config.host}:${port}/health`, metrics: `http://${config.host}:${port}/metrics` }, 'worker health and metrics served');
  await worker.worker.waitUntilReady().catch(() => {});
  log.info({ concurrency: config.compileConcurrency, pid: process.pid, ...(port !== null ? { port } : {}) }, 'quire worker ready');

  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'worker stopping: finishing jobs in flight');
  const force = setTimeout(() => {
    log.error('worker shutdown took over 150 s; exiting');
    process.exit(1);
  }, 150_000);
  force.unref();
  await worker.close();
  await pool.close();
  await status.close();
  for (const cleanup of cleanups) await cleanup();
  log.info('worker stopped');
  return 0;
}
