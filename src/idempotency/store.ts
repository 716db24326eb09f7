// Idempotency keys, per account, kept 24 h: the first request with a key runs and its response
// is stored; the same key with the same request replays it; with another request it is
// idempotency_key_reused; while the first is still running a duplicate gets 409
// idempotency_key_in_progress (retry shortly) rather than running twice.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { errors, refused } from '../errors.js';
import type { Database } from '../storage/schema.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-progress claim older than this belongs to a request that died; it may be taken over. */
const IN_PROGRESS_LEASE_MS = 5 * 60 * 1000;
const KEY_RULE = /^[\x21-\x7e]{1,255}$/;
const IN_PROGRESS_RETRY_SECONDS = 1;

export interface StoredResponse {
  status: number;
  body: string;
  contentType: string | null;
}

export type Claim = { kind: 'new' } | { kind: 'replay'; response: StoredResponse };

/** JSON with object keys sorted, so the same body spelled in another key order matches. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprint(door: string, body: unknown): string {
  return createHash('sha256').update(door).update('\0').update(canonical(body)).digest('hex');
}

export function checkKey(key: string): void {
  if (!KEY_RULE.test(key)) {
    throw errors.invalid_idempotency_key('Idempotency-Key must be 1 to 255 visible ASCII characters.', { limit: 255 });
  }
}

export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Claims `key` for this request, or returns the response to replay; throws reused / in progress. */
  async claim(accountId: number, key: string, print: string): Promise<Claim> {
    checkKey(key);
    for (let tries = 0; tries < 3; tries++) {
      const now = this.clock.now();
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({
          account_id: accountId,
          key,
          fingerprint: print,
          state: 'in_progress',
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + IN_PROGRESS_LEASE_MS).toISOString(),
        })
        .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'new' };
      const row = await this.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
      if (!row) continue;
      if (row.expires_at <= now.toISOString()) {
        // Expired (24 h passed, or a claim whose request died): forget it and claim afresh.
        await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('expires_at', '=', row.expires_at).execute();
        continue;
      }
      if (row.fingerprint !== print) {
        throw errors.idempotency_key_reused('This Idempotency-Key was used with a different request in the last 24 hours; use a new key for a new request.',
          { idempotency_key: key, retryable: false },
        );
      }
      if (row.state === 'in_progress') {
        throw refused(
          {
            code: 'idempotency_key_in_progress',
            message: 'A request with this Idempotency-Key is still running; retry shortly to get its response.',
            details: { idempotency_key: key },
            retryable: true,
          },
          IN_PROGRESS_RETRY_SECONDS,
        );
      }
      return { kind: 'replay', response: { status: row.status ?? 200, body: row.body ?? '', contentType: row.content_type } };
    }
    throw refused(
      { code: 'idempotency_key_in_progress', message: 'This Idempotency-Key is contended; retry shortly.', details: { idempotency_key: key }, retryable: true },
      IN_PROGRESS_RETRY_SECONDS,
    );
  }

  /** Keeps the response for 24 h from the first request. */
  async complete(accountId: number, key: string, response: StoredResponse): Promise<void> {
    const row = await this.db.selectFrom('idempotency_keys').select('created_at').where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
    const created = row ? new Date(row.created_at).getTime() : this.clock.now().getTime();
    await this.db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        status: response.status,
        body: response.body,
        content_type: response.contentType,
        expires_at: new Date(created + IDEMPOTENCY_TTL_MS).toISOString(),
      })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  /** Lets the key go: the response is not one to replay (5xx, 429, 409). */
  async release(accountId: number, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'in_progress').execute();
  }

  async sweep(): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', this.clock.now().toISOString()).execute();
  }

  /** Whether a response with this status is stored for replay (a transient refusal is not). */
  static keeps(status: number): boolean {
    return status < 500 && status !== 429 && status !== 409;
  }

  /** Runs `work` once per key (for MCP, where the result is a JS value rather than a reply). */
  async once(accountId: number, key: string, print: string, work: () => Promise<{ status: number; body: unknown }>): Promise<{ status: number; body: unknown; replayed: boolean }> {
    const claim = await this.claim(accountId, key, print);
    if (claim.kind === 'replay') return { status: claim.response.status, body: JSON.parse(claim.response.body) as unknown, replayed: true };
    let outcome: { status: number; body: unknown };
    try {
      outcome = await work();
    } catch (err) {
      await this.release(accountId, key);
      throw err;
    }
    if (IdempotencyStore.keeps(outcome.status)) {
      await this.complete(accountId, key, { status: outcome.status, body: JSON.stringify(outcome.body), contentType: 'application/json' });
    } else {
      await this.release(accountId, key);
    }
    return { ...outcome, replayed: false };
  }
}
