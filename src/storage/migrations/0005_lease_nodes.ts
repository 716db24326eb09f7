// A reservation lease names the node that holds it (a stable name and the instance id of the
// process), so the node's heartbeat renews only its own leases and a restarted node can end
// the leases its killed predecessor left (see quota/counters.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('counter_leases').addColumn('node', 'text').execute();
  await db.schema.alterTable('counter_leases').addColumn('instance', 'text').execute();
  await db.schema.createIndex('counter_leases_node').on('counter_leases').columns(['node', 'instance']).execute();
}
