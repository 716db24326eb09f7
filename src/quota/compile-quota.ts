// Who may compile now (SPEC §8.1, §8.3). A slot is reserved before TeX starts and committed
// only when a PDF is delivered; anything refused or failed releases it and costs nothing.
import { nextDayStart, nextMonthStart, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import { links, openSignupUrl } from '../links.js';
import type { Counters } from './counters.js';
import type { Payer } from './payer.js';
import { anonymousDailyKey, anonymousHourlyKey, monthlyCompilesKey } from './keys.js';
import { reserveOrRefuse } from './reserve.js';
import { graceAllowance, limitsOf, monthlyUse, type PlanName } from './plans.js';

const HOUR_MS = 3600_000;

export interface Ticket {
  /** The compile delivered a PDF: count it. */
  commit(): Promise<void>;
  /** The compile failed or was refused: give the slot back. */
  release(): Promise<void>;
  /** Present when this compile runs in the paid-plan grace buffer. */
  grace?: { remaining: number };
}

/** How a keyless caller gets a key: the sign-up page when it is open, else the operator. */
export function obtainKeyStep(config: Config) {
  const signupUrl = openSignupUrl(config);
  return {
    action: 'obtain_api_key' as const,
    ...(signupUrl ? { signup_url: signupUrl } : {}),
    env_var: 'QUIRE_API_KEY',
    header: 'Authorization: Bearer <key>',
    card_required: false,
  };
}

export class CompileQuota {
  constructor(
    private readonly counters: Counters,
    private readonly clock: Clock,
    private readonly config: Config,
  ) {}

  async reserve(caller: Payer): Promise<Ticket> {
    return caller.kind === 'anonymous' ? this.reserveAnonymous(caller.ip) : this.reserveAccount(caller.account.id, caller.account.plan);
  }

  private ticket(slots: Array<{ key: string; lease?: string }>): Omit<Ticket, 'grace'> {
    let settled = false;
    const settle = async (action: (key: string, lease?: string) => Promise<void>) => {
      if (settled) return;
      settled = true;
      for (const { key, lease } of slots) await action(key, lease);
    };
    return {
      commit: () => settle((key, lease) => this.counters.commit(key, lease)),
      // A release that cannot reach the store is harmless: the lease ends on its own. It must
      // not replace the error that made the compile fail.
      release: () => settle((key, lease) => this.counters.release(key, lease).catch(() => undefined)),
    };
  }

  private async reserveAccount(accountId: number, plan: PlanName): Promise<Ticket> {
    const now = this.clock.now();
    const limit = limitsOf(plan).compilesPerPeriod;
    const grace = graceAllowance(plan, this.config.graceFraction);
    const resetsAt = nextMonthStart(now);
    // Expire the counter well after the month so usage can still report it.
    const window = { key: monthlyCompilesKey(accountId, now), limit: limit + grace, resetsAt, expiresAt: new Date(resetsAt.getTime() + 40 * 24 * HOUR_MS) };
    const taken = await reserveOrRefuse(this.counters, now, window, ({ used }) => {
      const upgradeUrl = links(this.config).upgradeUrl;
      const { used_this_month, grace_used } = monthlyUse(plan, used);
      return {
        code: 'rate_limit',
        message:
          grace > 0
            ? `Monthly limit of ${limit} compilations and its grace buffer of ${grace} are used up; it resets at ${resetsAt.toISOString()}.`
            : `Monthly limit of ${limit} compilations is used up; it resets at ${resetsAt.toISOString()}.`,
        details: {
          plan,
          limit,
          used: used_this_month,
          monthly_limit: limit,
          used_this_month,
          grace_used,
          resets_at: resetsAt.toISOString(),
          grace_allowance: grace,
          upgrade_url: upgradeUrl,
          next_step: { action: 'obtain_api_key', signup_url: upgradeUrl, card_required: true },
        },
        retryable: false,
      };
    });
    const position = taken.used + taken.reserved;
    const ticket = this.ticket([taken]);
    return position > limit ? { ...ticket, grace: { remaining: Math.max(0, limit + grace - position) } } : ticket;
  }

  private async reserveAnonymous(ip: string): Promise<Ticket> {
    const now = this.clock.now();
    const limits = limitsOf('anonymous');
    const resetsAt = nextDayStart(now);
    const daily = await reserveOrRefuse(this.counters, now, { key: anonymousDailyKey(ip, now), limit: limits.compilesPerPeriod, resetsAt }, ({ used }) => ({
      code: 'anonymous_quota_exhausted',
      message: `The keyless tier allows ${limits.compilesPerPeriod} compilations per day per address; it resets at ${resetsAt.toISOString()}. Get a free API key to continue.`,
      details: {
        plan: 'anonymous',
        limit: limits.compilesPerPeriod,
        used,
        resets_at: resetsAt.toISOString(),
        upgrade_url: links(this.config).upgradeUrl,
        next_step: obtainKeyStep(this.config),
      },
      retryable: false,
    }));
    const hourStart = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
    const hourly = await reserveOrRefuse(
      this.counters,
      now,
      {
        key: anonymousHourlyKey(now),
        limit: this.config.anonymousHourlyCeiling,
        resetsAt: new Date(hourStart.getTime() + HOUR_MS),
        expiresAt: new Date(hourStart.getTime() + 2 * HOUR_MS),
        onRefused: () => this.counters.release(daily.key, daily.lease),
      },
      () => ({
        code: 'anonymous_capacity_exhausted',
        message: 'The keyless tier is at its hourly capacity on this server; retry later or use an API key.',
        details: { next_step: obtainKeyStep(this.config) },
        retryable: true,
      }),
    );
    return this.ticket([daily, hourly]);
  }
}
