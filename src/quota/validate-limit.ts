// The per-caller minute window of the free validate calls (docs/api.md, "Validate"): they cost
// no quota, so this is what keeps them from being a free way to load the service.
import type { Payer } from './payer.js';
import type { Counters } from './counters.js';
import { validateMinuteKey } from './keys.js';
import { reserveOrRefuse } from './reserve.js';

export async function chargeValidate(counters: Counters, now: Date, caller: Payer, limit: number): Promise<void> {
  const who = caller.kind === 'account' ? `account:${caller.account.id}` : `ip:${caller.ip}`;
  const minuteEnd = new Date(Math.floor(now.getTime() / 60_000) * 60_000 + 60_000);
  const window = { key: validateMinuteKey(who, now), limit, resetsAt: minuteEnd, expiresAt: new Date(minuteEnd.getTime() + 60_000) };
  const slot = await reserveOrRefuse(counters, now, window, (_, retry) => ({
    code: 'validate_rate_limited',
    message: `At most ${limit} validate calls per minute per caller; retry in ${retry} s.`,
    details: { limit },
    retryable: true,
  }));
  await counters.commit(slot.key, slot.lease);
}
