// Reserve a slot or refuse with Retry-After: the one place a refused counter becomes a
// catalogue error. A refusal's body carries `retryable` and `retry_after_seconds` (whole
// seconds until the window resets, at least 1); a retryable one also sends the matching
// Retry-After header, so the header and the body can never disagree. A refusal that holds
// until a long window resets (the month, the keyless day) is not retryable and sends no header.
import { refused, type Refusal } from '../errors.js';
import type { CounterState, Counters } from './counters.js';

export type { Refusal };

/** Whole seconds from `now` until `resetsAt`, at least 1. */
export function secondsUntil(resetsAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
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
    throw refused(describe({ used: taken.used, reserved: taken.reserved }, seconds), seconds);
  }
  return { key: window.key, used: taken.used, reserved: taken.reserved, ...(taken.lease !== undefined ? { lease: taken.lease } : {}) };
}
