// The TeX layer's own failures. It knows nothing of HTTP or the error catalogue; the compile
// domain (queue/domain.ts) turns these into catalogue errors in one place.

/** Every slot is busy and the wait queue is full: the caller should retry after a while. */
export class QueueFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Every compile slot is busy and the queue is full; retry shortly.');
    this.name = 'QueueFullError';
  }
}

/** A job file whose name the workspace cannot take (checked upstream; this is the last guard). */
export class JobFileNameError extends Error {
  constructor(readonly file: string) {
    super(`The file name "${file}" is reserved or not a plain file name.`);
    this.name = 'JobFileNameError';
  }
}
