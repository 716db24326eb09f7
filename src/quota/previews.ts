// The size-preview budget (SPEC §4.1, §8.4): at most PREVIEWS_PER_DAY per account in any
// rolling 24 hours, one at a time. Behind an interface so a test can make the store fail:
// a failing store only blocks previews, never in-limit compiles.
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { Counters } from './counters.js';
import { PREVIEWS_PER_DAY } from './plans.js';

const DAY_MS = 24 * 3600_000;

export type PreviewStart =
  | { ok: true; remaining: number; finish(delivered: boolean): Promise<void> }
  | { ok: false; reason: 'exhausted' | 'in_progress'; remaining: number };

export interface PreviewStore {
  /** Starts a size preview, or says why not. Throws when the store cannot answer. */
  begin(accountId: number, now: Date): Promise<PreviewStart>;
  /** Whether a size preview of the account is compiling now. Throws when the store cannot answer. */
  inProgress(accountId: number): Promise<boolean>;
}

/** The one-slot lock of an account's size previews: a counter reservation, atomic on both databases, across nodes. */
const lockKey = (accountId: number) => `preview-lock:account:${accountId}`;

export class SqlPreviewStore implements PreviewStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly counters: Counters,
  ) {}

  async begin(accountId: number, now: Date): Promise<PreviewStart> {
    const since = new Date(now.getTime() - DAY_MS).toISOString();
    const row = await this.db
      .selectFrom('preview_attempts')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', accountId)
      .where('created_at', '>', since)
      .executeTakeFirst();
    const remaining = Math.max(0, PREVIEWS_PER_DAY - Number(row?.count ?? 0));
    if (remaining === 0) return { ok: false, reason: 'exhausted', remaining };
    const lock = lockKey(accountId);
    const taken = await this.counters.tryReserve(lock, 1, new Date(now.getTime() + 3600_000));
    if (!taken.ok) return { ok: false, reason: 'in_progress', remaining };
    let finished = false;
    return {
      ok: true,
      remaining,
      finish: async (delivered: boolean) => {
        if (finished) return;
        finished = true;
        try {
          if (delivered) {
            await this.db.insertInto('preview_attempts').values({ account_id: accountId, created_at: now.toISOString() }).execute();
          }
        } finally {
          // Unreachable store: the lock's lease ends on its own.
          await this.counters.release(lock, taken.lease).catch(() => undefined);
        }
      },
    };
  }

  async inProgress(accountId: number): Promise<boolean> {
    return (await this.counters.get(lockKey(accountId))).reserved > 0;
  }
}
