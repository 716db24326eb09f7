// Time as a dependency, so rolling windows, expiries, deadlines and durations can be tested
// without waiting. Services read time only from here, never from Date.now() or new Date().

export interface Clock {
  now(): Date;
  /**
   * Milliseconds since the epoch: deadlines and durations. Epoch-based rather than monotonic
   * because a compile deadline travels to other processes (the BullMQ workers).
   */
  ms(): number;
}

export const systemClock: Clock = { now: () => new Date(), ms: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: Date = new Date('2026-01-15T12:00:00Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  ms(): number {
    return this.current.getTime();
  }
  set(date: Date | string): void {
    this.current = new Date(date);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** First instant of the next calendar month, UTC: when monthly counters reset. */
export function nextMonthStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1));
}

/** First instant of the next UTC day: when the anonymous daily counter resets. */
export function nextDayStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1));
}

export function monthKey(date: Date): string {
  return date.toISOString().slice(0, 7);
}

export function dayKey(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function hourKey(date: Date): string {
  return date.toISOString().slice(0, 13);
}
