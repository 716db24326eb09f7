// Exact counting under concurrency: a slot is reserved before work starts and then either
// committed (the work succeeded) or released (it failed, costing nothing). The SQL version
// serves SQLite and PostgreSQL; the conditional UPDATE is atomic on both, so no two callers
// can take the last slot.
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';

export interface CounterState {
  used: number;
  reserved: number;
}

export interface Counters {
  /** Committed count (0 when the key was never used). */
  get(key: string): Promise<CounterState>;
  /** Takes a slot when used + reserved < limit. `expiresAt` lets old keys be swept. */
  tryReserve(key: string, limit: number, expiresAt: Date): Promise<{ ok: boolean } & CounterState>;
  commit(key: string): Promise<void>;
  release(key: string): Promise<void>;
  /** Drops every reservation: only safe when no work is in flight (single-node start-up). */
  clearReservations(): Promise<void>;
  sweep(now: Date): Promise<void>;
}

export class SqlCounters implements Counters {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<CounterState> {
    const row = await this.db
      .selectFrom('counters')
      .select(['used', 'reserved'])
      .where('key', '=', key)
      .executeTakeFirst();
    return { used: Number(row?.used ?? 0), reserved: Number(row?.reserved ?? 0) };
  }

  async tryReserve(key: string, limit: number, expiresAt: Date) {
    await this.db
      .insertInto('counters')
      .values({ key, used: 0, reserved: 0, expires_at: expiresAt.toISOString() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const taken = await this.db
      .updateTable('counters')
      .set((eb) => ({ reserved: eb('reserved', '+', 1) }))
      .where('key', '=', key)
      .where((eb) => eb(eb('used', '+', eb.ref('reserved')), '<', limit))
      .returning(['used', 'reserved'])
      .executeTakeFirst();
    if (taken) return { ok: true, used: Number(taken.used), reserved: Number(taken.reserved) };
    return { ok: false, ...(await this.get(key)) };
  }

  async commit(key: string): Promise<void> {
    await this.db
      .updateTable('counters')
      .set((eb) => ({
        used: eb('used', '+', 1),
        reserved: eb.case().when('reserved', '>', 0).then(eb('reserved', '-', 1)).else(0).end(),
      }))
      .where('key', '=', key)
      .execute();
  }

  async release(key: string): Promise<void> {
    await this.db
      .updateTable('counters')
      .set((eb) => ({ reserved: eb('reserved', '-', 1) }))
      .where('key', '=', key)
      .where('reserved', '>', 0)
      .execute();
  }

  async clearReservations(): Promise<void> {
    await this.db.updateTable('counters').set({ reserved: 0 }).where('reserved', '>', 0).execute();
  }

  async sweep(now: Date): Promise<void> {
    await this.db.deleteFrom('counters').where('expires_at', '<', now.toISOString()).execute();
  }
}
