import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';

// Column types both SQLite and PostgreSQL accept; ids differ only in how they auto-increment.
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id = dialect === 'postgres' ? 'serial' : 'integer';
  const autoIncrement = dialect === 'sqlite';

  await db.schema
    .createTable('accounts')
    .addColumn('id', id, (c) => (autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', id, (c) => (autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('templates')
    .addColumn('id', id, (c) => (autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('latex_content', 'text', (c) => c.notNull())
    .addColumn('instructions', 'text')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('schema_json', 'text')
    .addColumn('sample_data_json', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('templates_account_name', ['account_id', 'name_lower'])
    .execute();

  await db.schema
    .createTable('assets')
    .addColumn('id', id, (c) => (autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('assets_account_name', ['account_id', 'name_lower'])
    .execute();
  await db.schema.createIndex('assets_sha256').on('assets').column('sha256').execute();

  await db.schema
    .createTable('pdfs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer')
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pdfs_expires').on('pdfs').column('expires_at').execute();

  await db.schema
    .createTable('counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reserved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('preview_attempts')
    .addColumn('id', id, (c) => (autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('preview_attempts_account')
    .on('preview_attempts')
    .columns(['account_id', 'created_at'])
    .execute();
}
