// Who is calling: the anonymous tier or an account. SPEC §5: a key may come as
// `Authorization: Bearer <key>` or `X-API-Key: <key>`; a key that is present but bad is a
// 401, never a downgrade to anonymous.
import { paidPlansPhrase } from '../quota/prose.js';
import { errors } from '../errors.js';
import { limitsOf, type Tier } from '../quota/plans.js';
import type { Account, AccountService, KeyInfo } from './accounts.js';

export type Caller =
  | { kind: 'anonymous'; ip: string }
  | { kind: 'account'; ip: string; account: Account; key: KeyInfo };

export type AccountCaller = Extract<Caller, { kind: 'account' }>;

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** True when the request carries credentials at all (valid or not). */
export function hasCredentials(headers: Headers): boolean {
  return header(headers, 'authorization') !== undefined || header(headers, 'x-api-key') !== undefined;
}

function presentedKey(headers: Headers): string | undefined {
  const authorization = header(headers, 'authorization');
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) {
      throw errors.invalid_api_key('Authorization header must be "Bearer <API key>"');
    }
    return match[1];
  }
  return header(headers, 'x-api-key')?.trim();
}

export async function identify(
  accounts: AccountService,
  headers: Headers,
  ip: string,
  options: { required: boolean },
): Promise<Caller> {
  if (!hasCredentials(headers)) {
    if (options.required) {
      throw errors.missing_api_key(
        'This endpoint needs an API key: send "Authorization: Bearer <key>" or "X-API-Key: <key>".',
      );
    }
    return { kind: 'anonymous', ip };
  }
  const key = presentedKey(headers);
  const found = key ? await accounts.authenticate(key) : null;
  if (!found) {
    throw errors.invalid_api_key('The API key is malformed, unknown or revoked.');
  }
  return { kind: 'account', ip, account: found.account, key: found.key };
}

export function tierOf(caller: Caller): Tier {
  return caller.kind === 'anonymous' ? 'anonymous' : caller.account.plan;
}

export function requireAccount(caller: Caller): AccountCaller {
  if (caller.kind !== 'account') {
    throw errors.missing_api_key('This operation needs an API key.');
  }
  return caller;
}

/**
 * Saved templates, stored assets and render need a paid plan (SPEC §5.7). `feature` names
 * what was asked for, so the message says what the upgrade buys.
 */
export function requirePaidPlan(caller: Caller, feature: string, upgradeUrl: string): AccountCaller {
  const owner = requireAccount(caller);
  const plan = owner.account.plan;
  if (!limitsOf(plan).paid) {
    throw errors.plan_required(`${feature} need a paid plan (${paidPlansPhrase()}); this account is on ${plan}.`, {
      plan,
      upgrade_url: upgradeUrl,
    });
  }
  return owner;
}
