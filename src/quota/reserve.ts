// Reserve a slot or refuse with Retry-After: the one place a refused counter becomes a
// catalogue error. A refusal's body carries `retryable` and `retry_after_seconds` (whole
// seconds until the window resets, at least 1); a retryable one also sends the matching
// Retry-After header, so the header and the body can never disagree. A refusal that holds
// until a long window resets (the month, the keyless day) is not retryable and sends no header.
import { ServiceError, type ErrorCode, type ErrorDetails } from '../errors.js';
import type { CounterState, Counters } from './counters.js';

export interface Refusal {
  code: ErrorCode;
  message: string;
  /** Body fields next to `retryable` and `retry_after_seconds`. */
  details?: ErrorDetails;
  /** True: retry after the seconds given (Retry-After is sent). False: the limit holds until the reset. */
  retryable: boolean;
}

/** Whole seconds from `now` until `resetsAt`, at least 1. */
export function secondsUntil(resetsAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
}

/** The error of a refusal that may be retried after `retryAfterSeconds`. */
export function refuse(refusal: Refusal, retryAfterSeconds: number): ServiceError {
  const { code, message, details = {}, retryable } = refusal;
  return new ServiceError(
    code,
    message,
    { ...details, retryable, retry_after_seconds: retryAfterSeconds },
    retryable ? { 'retry-after': String(retryAfterSeconds) } : {},
  );
}

export interface Window {
  key: string;
  /** Slots the window holds (committed plus live reservations). */
  limit: number;
  /** When the window's count resets: what Retry-After counts down to. */
  resetsAt: Date;
  /** When the counter may be swept; the reset when not given. */
  expiresAt?: Date;
  /** Runs before the refusal is thrown (e.g. to give back a slot taken in another window). */
  onRefused?: () => Promise<void>;
}

export interface Slot extends CounterState {
  key: string;
  lease?: string;
}

/**
 * Takes a slot of `window`, or throws the refusal `describe` writes for the state found and
 * the seconds until the window resets.
 */
export async function reserveOrRefuse(
  counters: Counters,
  now: Date,
  window: Window,
  describe: (state: CounterState, retryAfterSeconds: number) => Refusal,
): Promise<Slot> {
  const taken = await counters.tryReserve(window.key, window.limit, window.expiresAt ?? window.resetsAt);
  if (!taken.ok) {
    await window.onRefused?.();
    const seconds = secondsUntil(window.resetsAt, now);
    throw refuse(describe({ used: taken.used, reserved: taken.reserved }, seconds), seconds);
  }
  return { key: window.key, used: taken.used, reserved: taken.reserved, ...(taken.lease !== undefined ? { lease: taken.lease } : {}) };
}
