// The TeX job queue as the domain sees it: the same queue, with the TeX layer's own errors
// turned into catalogue errors (a full queue is 503 server_busy with Retry-After).
import { errors, ServiceError, refused } from '../errors.js';
import { JobFileNameError, QueueFullError } from '../tex/errors.js';
import type { JobQueue } from '../tex/queue.js';
import type { TexJob, TexResult } from '../tex/job.js';

/** 503 server_busy: no slot or worker is free and no more may wait. */
export function serverBusy(message: string, retryAfterSeconds: number): ServiceError {
  return refused({ code: 'server_busy', message, retryable: true }, retryAfterSeconds);
}

function domainError(err: unknown): unknown {
  if (err instanceof QueueFullError) return serverBusy(err.message, err.retryAfterSeconds);
  if (err instanceof JobFileNameError) return errors.invalid_asset_filename(err.message, { name: err.file });
  return err;
}

export function domainQueue(queue: JobQueue): JobQueue {
  return {
    run: (job: TexJob): Promise<TexResult> =>
      queue.run(job).catch((err: unknown) => {
        throw domainError(err);
      }),
    stats: () => queue.stats(),
    close: () => queue.close(),
    ...(queue.ping ? { ping: () => queue.ping!() } : {}),
    ...(queue.start ? { start: () => queue.start!() } : {}),
  };
}
