// Fair use of what is free (issue 26; see docs/fair-use.md). A failed or timed-out compile
// costs no quota, so two limits of the plan table (FAIR_USE) keep one caller from holding the
// service's capacity for free: compiles in flight at once (a lease per compile, so a killed
// node's go back with its leases), and milliseconds of TeX spent on failures per window
// (passes, reruns and diagnosis probes of compiles that delivered nothing). Both are counters,
// so they hold across API nodes on SQLite, PostgreSQL and Redis alike.
import type { Payer } from './payer.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { refused } from '../errors.js';
import type { Counters } from './counters.js';
import { failureKey, inFlightKey, probeMinuteKey } from './keys.js';
import { FAIR_USE, PROBES_PER_MINUTE, type Tier } from './plans.js';
import { secondsUntil } from './reserve.js';

/** A refused concurrent compile retries after this; a compile slot rarely frees sooner. */
export const CONCURRENCY_RETRY_SECONDS = 5;
const DAY_MS = 86_400_000;

export interface FairLimits {
  concurrentCompiles: number;
  failureBudgetMs: number;
  windowMs: number;
}

/** The plan table's fair-use row with the operator's factors applied. */
export function fairLimits(tier: Tier, config: Pick<Config, 'failureWindowSeconds' | 'failureBudgetFactor' | 'callerConcurrencyFactor'>): FairLimits {
  const row = FAIR_USE[tier];
  return {
    concurrentCompiles: Math.max(1, Math.round(row.concurrentCompiles * config.callerConcurrencyFactor)),
    failureBudgetMs: Math.round(row.failureSeconds * config.failureBudgetFactor * 1000),
    windowMs: config.failureWindowSeconds * 1000,
  };
}

const tierOf = (caller: Payer): Tier => (caller.kind === 'account' ? caller.account.plan : 'anonymous');

/** Whose limits these are: an account, or a keyless address (as QUIRE_TRUST_PROXY resolved it). */
export function callerId(caller: Payer): string {
  return caller.kind === 'account' ? `account:${caller.account.id}` : `anon:${caller.ip}`;
}

/** One admitted compile: its TeX time is added up and charged only when it delivers nothing. */
export interface FairTicket {
  /** TeX time the compile used (its passes, or a probe's). */
  spend(ms: number): void;
  /** The compile's failure time (before this compile) plus what it spent has reached the budget. */
  readonly overBudget: boolean;
  /** Charges the failure time when nothing was delivered, and ends the in-flight lease. */
  finish(delivered: boolean): Promise<void>;
}

/** Lets a diagnosis run one more probe for this caller (see PROBES_PER_MINUTE); swappable for a shared probe budget. */
export interface ProbeAllowance {
  take(caller: Payer): Promise<boolean>;
}

export interface FairUseReport {
  concurrent_compiles_limit: number;
  compiles_in_flight: number;
  failure_budget_seconds: number;
  failure_seconds_used: number;
  failure_window_seconds: number;
  failure_window_resets_at: string;
}

export class FairUse implements ProbeAllowance {
  constructor(
    private readonly counters: Counters,
    private readonly clock: Clock,
    private readonly config: Config,
  ) {}

  private window(limits: FairLimits): { start: Date; end: Date } {
    const start = Math.floor(this.clock.ms() / limits.windowMs) * limits.windowMs;
    return { start: new Date(start), end: new Date(start + limits.windowMs) };
  }

  /** Takes one of the caller's in-flight slots, or refuses: failure budget used, or as many compiles in flight as allowed. */
  async admit(caller: Payer): Promise<FairTicket> {
    const tier = tierOf(caller);
    const id = callerId(caller);
    const limits = fairLimits(tier, this.config);
    const now = this.clock.now();
    const window = this.window(limits);
    const failures = failureKey(id, window.start);
    const { used } = await this.counters.get(failures);
    if (used >= limits.failureBudgetMs) {
      const seconds = secondsUntil(window.end, now);
      throw refused(
        {
          code: 'failure_budget_exhausted',
          message: `Failed and timed-out compiles of this ${tier === 'anonymous' ? 'address' : 'account'} used ${Math.round(used / 1000)} s of TeX in this ${limits.windowMs / 1000}-second window, the ${limits.failureBudgetMs / 1000} s the ${tier} plan allows for free; compiles resume at ${window.end.toISOString()}. Fix the document (loops, very heavy content) before sending it again.`,
          details: { plan: tier, budget_seconds: limits.failureBudgetMs / 1000, used_seconds: Math.round(used / 1000), window_seconds: limits.windowMs / 1000, resets_at: window.end.toISOString() },
          retryable: true,
        },
        seconds,
      );
    }
    const slot = await this.counters.tryReserve(inFlightKey(id), limits.concurrentCompiles, new Date(now.getTime() + DAY_MS));
    if (!slot.ok) {
      throw refused(
        {
          code: 'too_many_concurrent_compiles',
          message: `This ${tier === 'anonymous' ? 'address' : 'account'} already has ${slot.reserved} compile(s) in flight, the most the ${tier} plan allows at once; retry when one finishes.`,
          details: { plan: tier, limit: limits.concurrentCompiles, in_flight: slot.reserved },
          retryable: true,
        },
        CONCURRENCY_RETRY_SECONDS,
      );
    }
    let spent = 0;
    let finished = false;
    return {
      spend: (ms) => void (spent += Math.max(0, Math.round(ms))),
      get overBudget() {
        return used + spent >= limits.failureBudgetMs;
      },
      finish: async (delivered) => {
        if (finished) return;
        finished = true;
        // Charged to the window the work ends in (a compile that began in the last one still
        // counts against the budget the caller sees now). A store that cannot be reached loses one
        // charge; it must not replace the compile's own error.
        const ended = this.window(limits);
        if (!delivered && spent > 0) {
          await this.counters.add(failureKey(id, ended.start), spent, new Date(ended.end.getTime() + limits.windowMs)).catch(() => undefined);
        }
        await this.counters.release(inFlightKey(id), slot.lease).catch(() => undefined);
      },
    };
  }

  /** At most PROBES_PER_MINUTE probe runs per caller per UTC minute, on every node together. */
  async take(caller: Payer): Promise<boolean> {
    const now = this.clock.now();
    const key = probeMinuteKey(callerId(caller), now);
    const slot = await this.counters.tryReserve(key, PROBES_PER_MINUTE, new Date(now.getTime() + 120_000));
    if (!slot.ok) return false;
    await this.counters.commit(key, slot.lease);
    return true;
  }

  async report(caller: Payer): Promise<FairUseReport> {
    const id = callerId(caller);
    const limits = fairLimits(tierOf(caller), this.config);
    const window = this.window(limits);
    const [failures, inFlight] = await Promise.all([this.counters.get(failureKey(id, window.start)), this.counters.get(inFlightKey(id))]);
    return {
      concurrent_compiles_limit: limits.concurrentCompiles,
      compiles_in_flight: inFlight.reserved,
      failure_budget_seconds: limits.failureBudgetMs / 1000,
      failure_seconds_used: Math.round(failures.used / 100) / 10,
      failure_window_seconds: limits.windowMs / 1000,
      failure_window_resets_at: window.end.toISOString(),
    };
  }
}
