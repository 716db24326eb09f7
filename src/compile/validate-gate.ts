// How many validate calls this process reads at once. Validate is free and keyless, and its
// checks (reading the source, name suggestions, starting chktex and kpsewhich) run on the
// event loop that also answers every other request: twenty callers each looping validate once
// kept /health waiting behind their work for seconds (issue 37). With at most VALIDATE_AT_ONCE
// reading, one turn of the event loop holds at most that many pieces of validate work, and the
// rest wait for their turn without costing the loop anything; past VALIDATE_WAITING_MAX waiting
// a call is refused at once (503 server_busy with Retry-After) instead of holding a socket.
import { refused, type ServiceError } from '../errors.js';

/**
 * Two: one validate waits for chktex in its sandbox while the other reads, so the loop is
 * never idle on validate's account, and never holds more than two validates' pieces (each
 * bounded: validate-limits.ts, tex/lint/loads.ts) between two other requests.
 */
export const VALIDATE_AT_ONCE = 2;
/** About five seconds of queued validates (each ~50-150 ms of work here): beyond that a caller is better told to retry. */
export const VALIDATE_WAITING_MAX = 64;
/** Retry-After for a refused call: the queue ahead drains in about this long. */
const RETRY_AFTER_SECONDS = 5;

export class ValidateGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly atOnce = VALIDATE_AT_ONCE,
    private readonly waitingMax = VALIDATE_WAITING_MAX,
  ) {}

  /** Runs `work` in its turn; throws 503 server_busy when too many wait already. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.waiting.length >= this.waitingMax) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes to the next caller as it is (running stays counted).
      if (next) next();
      else this.running--;
    }
  }
}

function busy(): ServiceError {
  return refused({ code: 'server_busy', message: 'Too many validate calls are waiting on this server; retry shortly.', retryable: true }, RETRY_AFTER_SECONDS);
}
