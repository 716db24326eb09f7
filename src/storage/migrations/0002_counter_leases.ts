// Reservations become leases (one row each, with an end) so that a node that dies mid-compile
// gives its slot back when the lease ends. `counters.reserved` is no longer read: the live
// leases are the reservations. Reservations from before this migration cannot be told apart
// from those of a dead node, so they are dropped.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('counter_leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('counter_leases_key').on('counter_leases').columns(['key', 'expires_at']).execute();
  await sql`update counters set reserved = 0`.execute(db);
}
