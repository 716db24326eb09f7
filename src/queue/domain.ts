// The TeX queue as the domain sees it: the same queue, with the TeX layer's own errors
// turned into catalogue errors (a full queue is 503 server_busy with Retry-After).
import { errors, ServiceError, refused } from '../errors.js';
import { JobFileNameError, QueueFullError } from '../tex/errors.js';
import type { TexQueue } from './queue.js';

/** 503 server_busy: no slot or worker is free and no more may wait. */
export function serverBusy(message: string, retryAfterSeconds: number): ServiceError {
  return refused({ code: 'server_busy', message, retryable: true }, retryAfterSeconds);
}

function domainError(err: unknown): unknown {
  if (err instanceof QueueFullError) return serverBusy(err.message, err.retryAfterSeconds);
  if (err instanceof JobFileNameError) return errors.invalid_asset_filename(err.message, { name: err.file });
  return err;
}

function translated<T>(work: Promise<T>): Promise<T> {
  return work.catch((err: unknown) => {
    throw domainError(err);
  });
}

export function domainQueue(queue: TexQueue): TexQueue {
  return {
    run: (job) => translated(queue.run(job)),
    merge: (job) => translated(queue.merge(job)),
    stats: () => queue.stats(),
    close: () => queue.close(),
    ...(queue.ping ? { ping: () => queue.ping!() } : {}),
    ...(queue.start ? { start: () => queue.start!() } : {}),
  };
}
