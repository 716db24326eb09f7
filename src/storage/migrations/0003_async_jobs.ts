// Async jobs with their webhook delivery state, idempotency keys and per-account webhook
// secrets (docs/async-and-webhooks.md). Same column types on SQLite and PostgreSQL.
import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('body_json', 'text')
    .addColumn('callback_url', 'text')
    .addColumn('webhook_state', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('webhook_attempts_json', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('webhook_next_at', 'text')
    .addColumn('runner_id', 'text')
    .addColumn('heartbeat_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_webhook_next').on('jobs').column('webhook_next_at').execute();
  await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'heartbeat_at']).execute();
  await db.schema.createIndex('jobs_created').on('jobs').column('created_at').execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('body', 'text')
    .addColumn('content_type', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();

  await db.schema
    .createTable('webhook_secrets')
    .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
