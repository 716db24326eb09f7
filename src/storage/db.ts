// Opens the database named by QUIRE_DATABASE_URL (SQLite by default, PostgreSQL on shared
// infrastructure) and brings its schema up to date.
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

// COUNT(*) and BIGINT arrive as strings from pg; every such value here fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function sqlitePath(url: string): string {
  const path = url.replace(/^sqlite:(\/\/)?/, '');
  return path === '' ? ':memory:' : path;
}

export async function openDb(url: string): Promise<Db> {
  if (url.startsWith('sqlite:')) {
    const database = new SQLite(sqlitePath(url));
    database.pragma('journal_mode = WAL');
    database.pragma('busy_timeout = 5000');
    database.pragma('foreign_keys = ON');
    database.pragma('synchronous = NORMAL');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          MIGRATIONS.map((m) => [m.name, { up: (k: Kysely<unknown>) => m.up(k, db.dialect) }]),
        ),
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * Serialises one account's writes until the transaction ends, so checks such as "under the
 * plan's cap" and the insert that follows them are one step. SQLite transactions are serial.
 */
export async function lockAccount(db: Db, trx: Kysely<Database>, accountId: number): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
}

export async function pingDb(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
