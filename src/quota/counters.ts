// Exact counting under concurrency: a slot is reserved before work starts and then either
// committed (the work succeeded) or released (it failed, costing nothing). A reservation is a
// lease that carries its node's name and instance id and lasts RESERVATION_LEASE_MS unless its
// node renews it: each node's heartbeat renews its own live leases, so a killed node's slots
// come back within the lease length, and a restarted node ends its previous instance's leases
// at once (endPreviousInstance). The SQL version serves SQLite and PostgreSQL:
// each reservation is a row in counter_leases, taken inside a transaction that holds the
// counter's row lock (PostgreSQL) or the single writer (SQLite), so no two callers can take
// the last slot.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { systemClock } from '../clock.js';
import type { Database } from '../storage/schema.js';

/** A lease's life without a heartbeat (QUIRE_NODE_HEARTBEAT_TIMEOUT_SECONDS); its node renews it every third of that. */
export const RESERVATION_LEASE_MS = 30 * 1000;

/** Who holds a lease: the node's stable name (it survives a restart) and this process's instance id. */
export interface LeaseOwner {
  node: string;
  instance: string;
}

export function leaseOwner(node = 'local'): LeaseOwner {
  return { node, instance: randomUUID() };
}

export interface CounterState {
  used: number;
  reserved: number;
}

export interface Counters {
  /** Committed count and live reservations (0 and 0 when the key was never used). */
  get(key: string): Promise<CounterState>;
  /**
   * Takes a slot when used + reserved < limit, as a lease that ends on its own after
   * RESERVATION_LEASE_MS. `expiresAt` lets old keys be swept.
   */
  tryReserve(key: string, limit: number, expiresAt: Date): Promise<{ ok: boolean; lease?: string } & CounterState>;
  /** Counts the work and ends the lease (the oldest of the key when none is named). */
  commit(key: string, lease?: string): Promise<void>;
  /** Ends the lease without counting. */
  release(key: string, lease?: string): Promise<void>;
  /** Adds `amount` to the committed count at once, without a lease (e.g. milliseconds of failed TeX). */
  add(key: string, amount: number, expiresAt: Date): Promise<void>;
  /** Renews this instance's live leases for another lease length (the node's heartbeat). */
  heartbeat(): Promise<void>;
  /** Ends the leases a previous instance of this node left (it was killed): run once at start. */
  endPreviousInstance(): Promise<void>;
  /** Drops every reservation: only safe when no work is in flight (single-node start-up). */
  clearReservations(): Promise<void>;
  sweep(now: Date): Promise<void>;
  /** Throws when the backing store cannot answer (for /health). */
  ping?(): Promise<void>;
}

export class SqlCounters implements Counters {
  /** This instance's live leases: what its heartbeat renews. */
  private readonly live = new Set<string>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
    private readonly now: () => number = systemClock.ms,
    private readonly leaseMs = RESERVATION_LEASE_MS,
    private readonly owner: LeaseOwner = leaseOwner(),
  ) {}

  private async state(db: Kysely<Database>, key: string): Promise<CounterState> {
    const now = new Date(this.now()).toISOString();
    const [row, leases] = await Promise.all([
      db.selectFrom('counters').select('used').where('key', '=', key).executeTakeFirst(),
      db
        .selectFrom('counter_leases')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('key', '=', key)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    ]);
    return { used: Number(row?.used ?? 0), reserved: Number(leases?.n ?? 0) };
  }

  get(key: string): Promise<CounterState> {
    return this.state(this.db, key);
  }

  async tryReserve(key: string, limit: number, expiresAt: Date) {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('counters')
        .values({ key, used: 0, reserved: 0, expires_at: expiresAt.toISOString() })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      // Serialises reservations of this key across nodes (SQLite transactions already are serial).
      if (this.dialect === 'postgres') await sql`select key from counters where key = ${key} for update`.execute(trx);
      const now = this.now();
      await trx.deleteFrom('counter_leases').where('key', '=', key).where('expires_at', '<=', new Date(now).toISOString()).execute();
      const { used, reserved } = await this.state(trx, key);
      if (used + reserved >= limit) return { ok: false, used, reserved };
      const lease = randomUUID();
      await trx
        .insertInto('counter_leases')
        .values({ id: lease, key, expires_at: new Date(now + this.leaseMs).toISOString(), node: this.owner.node, instance: this.owner.instance })
        .execute();
      this.live.add(lease);
      return { ok: true, used, reserved: reserved + 1, lease };
    });
  }

  /** The named lease, or the one of `key` that ends first. */
  private async endLease(trx: Kysely<Database>, key: string, lease?: string): Promise<void> {
    const id =
      lease ??
      (await trx.selectFrom('counter_leases').select('id').where('key', '=', key).orderBy('expires_at').limit(1).executeTakeFirst())?.id;
    if (id === undefined) return;
    this.live.delete(id);
    await trx.deleteFrom('counter_leases').where('id', '=', id).where('key', '=', key).execute();
  }

  async add(key: string, amount: number, expiresAt: Date): Promise<void> {
    await this.db
      .insertInto('counters')
      .values({ key, used: amount, reserved: 0, expires_at: expiresAt.toISOString() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ used: sql<number>`counters.used + ${amount}` }))
      .execute();
  }

  async heartbeat(): Promise<void> {
    if (this.live.size === 0) return;
    await this.db
      .updateTable('counter_leases')
      .set({ expires_at: new Date(this.now() + this.leaseMs).toISOString() })
      .where('id', 'in', [...this.live])
      .where('expires_at', '>', new Date(this.now()).toISOString())
      .execute();
  }

  async endPreviousInstance(): Promise<void> {
    await this.db.deleteFrom('counter_leases').where('node', '=', this.owner.node).where('instance', '<>', this.owner.instance).execute();
  }

  async commit(key: string, lease?: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('counters')
        .set((eb) => ({ used: eb('used', '+', 1) }))
        .where('key', '=', key)
        .execute();
      await this.endLease(trx, key, lease);
    });
  }

  async release(key: string, lease?: string): Promise<void> {
    await this.endLease(this.db, key, lease);
  }

  async clearReservations(): Promise<void> {
    this.live.clear();
    await this.db.deleteFrom('counter_leases').execute();
  }

  async sweep(now: Date): Promise<void> {
    await this.db.deleteFrom('counter_leases').where('expires_at', '<=', now.toISOString()).execute();
    await this.db.deleteFrom('counters').where('expires_at', '<', now.toISOString()).execute();
  }
}
