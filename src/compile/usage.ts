// The caller's usage as a compile body shows it (SPEC §2.2, §2.3): an account's month or an
// anonymous address's day, read from the quota counters after the compile was charged (or
// its slot went back).
import type { Caller } from '../accounts/caller.js';
import { nextDayStart, nextMonthStart, type Clock } from '../clock.js';
import type { Counters } from '../quota/counters.js';
import { anonymousDailyKey, monthlyCompilesKey } from '../quota/keys.js';
import { limitsOf, monthlyUse } from '../quota/plans.js';
import type { AccountUsage, AnonymousUsage } from './types.js';

export async function usageOf(deps: { clock: Clock; counters: Counters }, caller: Caller): Promise<AccountUsage | AnonymousUsage> {
  const now = deps.clock.now();
  if (caller.kind === 'anonymous') {
    const limit = limitsOf('anonymous').compilesPerPeriod;
    const { used } = await deps.counters.get(anonymousDailyKey(caller.ip, now));
    return { daily_limit: limit, used_today: used, remaining_today: Math.max(0, limit - used), resets_at: nextDayStart(now).toISOString() };
  }
  const { plan, id } = caller.account;
  const { used } = await deps.counters.get(monthlyCompilesKey(id, now));
  const { used_this_month, grace_used } = monthlyUse(plan, used);
  const monthly_limit = limitsOf(plan).compilesPerPeriod;
  return { plan, monthly_limit, used_this_month, compilations_this_month: used_this_month, grace_used, resets_at: nextMonthStart(now).toISOString() };
}
