// Self-service sign-up (QUIRE_SIGNUP=open): a Free account and its key for an email address.
// Attempts are counted per IP and hour, failed ones included, so the form can neither mint
// accounts in bulk nor probe which addresses already have one.
import type { Static } from '@sinclair/typebox';
import type { Clock } from '../clock.js';
import { errors, ServiceError } from '../errors.js';
import type { Counters } from '../quota/counters.js';
import { signupHourlyKey } from '../quota/keys.js';
import { SIGNUPS_PER_IP_PER_HOUR } from '../quota/plans.js';
import { reserveOrRefuse } from '../quota/reserve.js';
import type { AccountService } from './accounts.js';
import type { SignupResponse } from './schemas.js';

export type SignupResult = Static<typeof SignupResponse>;

export const SIGNUP_CLOSED_MESSAGE =
  'Sign-up is closed on this server. An operator creates accounts with: quire account create --email <address> --plan free';

const HOUR_MS = 3_600_000;

function nextHourStart(date: Date): Date {
  return new Date(Math.floor(date.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
}

export class SignupService {
  constructor(
    private readonly accounts: AccountService,
    private readonly counters: Counters,
    private readonly clock: Clock,
    readonly mode: 'open' | 'closed',
  ) {}

  get open(): boolean {
    return this.mode === 'open';
  }

  async signup(input: { email: string; ip: string }): Promise<SignupResult> {
    if (!this.open) throw errors.signup_closed(SIGNUP_CLOSED_MESSAGE);
    const now = this.clock.now();
    const key = signupHourlyKey(input.ip, now);
    const resetsAt = nextHourStart(now);
    const slot = await reserveOrRefuse(this.counters, now, { key, limit: SIGNUPS_PER_IP_PER_HOUR, resetsAt }, ({ used }) => ({
      code: 'rate_limit',
      message: `Too many sign-ups from this address: ${SIGNUPS_PER_IP_PER_HOUR} per hour. Try again later.`,
      details: { limit: SIGNUPS_PER_IP_PER_HOUR, used, resets_at: resetsAt.toISOString() },
      retryable: true,
    }));
    try {
      const { account, apiKey } = await this.accounts.create({ email: input.email, plan: 'free' });
      await this.counters.commit(key, slot.lease);
      return { api_key: apiKey, account };
    } catch (err) {
      // A malformed address costs nothing; a taken one counts, like a success would.
      if (err instanceof ServiceError && err.code === 'email_taken') await this.counters.commit(key, slot.lease);
      else await this.counters.release(key, slot.lease);
      throw err;
    }
  }
}
