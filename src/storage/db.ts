// Opens the database named by QUIRE_DATABASE_URL (SQLite by default, PostgreSQL on shared
// infrastructure) and brings its schema up to date. A lost PostgreSQL never kills the process:
// broken connections are dropped and replaced on demand, and a query that meets one fails
// with database_unavailable (503, retryable).
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { databaseFault } from './faults.js';
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

/** Called with connection errors that no query is waiting for (an idle connection dropped). */
export type FaultListener = (err: Error) => void;

/**
 * The pool Kysely sees: the same pg pool, with connection failures turned into
 * database_unavailable. Without an `error` listener on the pool and on each client, a backend
 * terminated under an idle or checked-out connection is an uncaught exception.
 */
function faultTolerantPool(url: string, onFault: FaultListener): PostgresPool {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
  pool.on('error', onFault);
  pool.on('connect', (client) => client.on('error', onFault));
  const mapped = (err: unknown) => databaseFault(err) ?? err;
  return {
    async connect() {
      const client = await pool.connect().catch((err: unknown) => {
        throw mapped(err);
      });
      const query = (text: unknown, parameters?: unknown) => {
        const result = client.query(text as string, parameters as unknown[]) as unknown;
        return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(mapped(err))) : result;
      };
      return { query, release: () => client.release() } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

export async function openDb(url: string, onFault: FaultListener = () => {}): Promise<Db> {
  if (url.startsWith('sqlite:')) {
    const database = new SQLite(sqlitePath(url));
    database.pragma('journal_mode = WAL');
    database.pragma('busy_timeout = 5000');
    database.pragma('foreign_keys = ON');
    database.pragma('synchronous = NORMAL');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  }
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: faultTolerantPool(url, onFault) }) });
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
