// How long a job would wait for a slot, from how long recent jobs held one: the pool refuses an
// interactive job that would wait past its bound, and tells a refused caller when to come back
// (Retry-After of 503 server_busy). A fixed Retry-After is wrong both ways: a queue that
// drains in a second sends clients away for five and leaves the slots idle; one that drains in
// a minute brings them back too early.

/** The answer before any job has finished, and its bounds. */
const FIRST_GUESS_SECONDS = 5;
const MIN_SECONDS = 1;
const MAX_SECONDS = 60;
/** Weight of the newest job in the running mean (about the last ten jobs count). */
const WEIGHT = 0.1;
/** A wait of this many job lengths is never too long: long jobs keep a queue (theses take seconds each). */
const JOB_LENGTHS = 2;

export class DrainEstimate {
  private meanMs: number | undefined;

  /** A job held a slot for `ms`. */
  observe(ms: number): void {
    this.meanMs = this.meanMs === undefined ? ms : this.meanMs + WEIGHT * (ms - this.meanMs);
  }

  /** How long a job with `ahead` jobs before it waits for one of `slots` busy slots; 0 before any job finished. */
  waitMs(ahead: number, slots: number): number {
    return this.meanMs === undefined ? 0 : (this.meanMs * (ahead + 1)) / Math.max(1, slots);
  }

  /**
   * Whether a job with `ahead` jobs before it would wait too long: past `boundMs` and past two
   * job lengths. A job with nothing ahead of it is next, so refusing it would help nobody.
   */
  tooLong(ahead: number, slots: number, boundMs: number): boolean {
    if (ahead === 0 || this.meanMs === undefined) return false;
    return this.waitMs(ahead, slots) > Math.max(boundMs, JOB_LENGTHS * this.meanMs);
  }

  /** Seconds until `ahead` waiting jobs (and a caller after them) would have a slot of `slots`. */
  retryAfterSeconds(ahead: number, slots: number): number {
    if (this.meanMs === undefined) return FIRST_GUESS_SECONDS;
    return Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, Math.ceil(this.waitMs(ahead, slots) / 1000)));
  }
}
