// Real parts for tests: a temp data dir, a fresh SQLite file or PostgreSQL database, the
// real TeX engines, and the real HTTP app (inject or a listening server).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import type { Clock } from '../src/clock.js';
import { loadConfig, texIndexDir } from '../src/config.js';
import { buildApp } from '../src/app.js';
import type { App } from '../src/http/types.js';
import type { PlanName } from '../src/quota/plans.js';
import { createServices, type ServiceOptions, type Services } from '../src/services.js';

export type DbKind = 'sqlite' | 'postgres';
export const DB_KINDS: DbKind[] = ['sqlite', 'postgres'];

const PG_ADMIN = process.env.QUIRE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A new, empty PostgreSQL database; the returned function drops it. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `quire_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_ADMIN });
      await client.connect();
      // pg's Pool.end() resolves before its sockets have closed; terminating those backends
      // (FORCE) would then surface as an uncaught error in the test. Let them go first.
      for (let i = 0; i < 50; i++) {
        const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
        if (rows[0].n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestServicesOptions extends ServiceOptions {
  db?: DbKind;
  env?: Record<string, string>;
  clock?: Clock;
}

export interface TestServices extends Services {
  dataDir: string;
  /** Closes services, removes the data dir and drops the database. */
  cleanup(): Promise<void>;
}

export async function testServices(options: TestServicesOptions = {}): Promise<TestServices> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-test-'));
  let dropDb = async () => {};
  let databaseUrl = `sqlite://${join(dataDir, 'quire.db')}`;
  if (options.db === 'postgres') {
    const fresh = await freshPostgres();
    databaseUrl = fresh.url;
    dropDb = fresh.drop;
  }
  const config = loadConfig({
    QUIRE_DATA_DIR: dataDir,
    QUIRE_DATABASE_URL: databaseUrl,
    QUIRE_SECRET: 'test-secret-0123456789abcdef',
    QUIRE_BASE_URL: 'http://quire.test',
    LOG_LEVEL: 'silent',
    // No background preamble-format builds in app tests (test/tex/preamble.test.ts covers the cache).
    QUIRE_PREAMBLE_CACHE_MB: '0',
    // Paused preambles likewise: tests that want them build their own (test/tex/paused.test.ts).
    QUIRE_PAUSED_PREAMBLES: '0',
    // The machine's TeX Live index cache, wherever this machine keeps it.
    QUIRE_TEX_INDEX_DIR: texIndexDir(process.env),
    ...options.env,
  });
  const services = await createServices(config, {
    ...options,
    log: options.log ?? pino({ level: process.env.QUIRE_TEST_LOG ?? 'silent' }),
  });
  return Object.assign(services, {
    dataDir,
    async cleanup() {
      await services.close();
      await dropDb();
      await rm(dataDir, { recursive: true, force: true });
    },
  });
}

export interface TestApp {
  app: App;
  services: TestServices;
  close(): Promise<void>;
}

export async function testApp(options: TestServicesOptions = {}): Promise<TestApp> {
  const services = await testServices(options);
  const app = await buildApp(services);
  await app.ready();
  return {
    app,
    services,
    async close() {
      await app.close();
      await services.cleanup();
    },
  };
}

export interface TestAccount {
  id: number;
  email: string;
  plan: PlanName;
  key: string;
  /** Headers carrying the key as a Bearer token. */
  headers: Record<string, string>;
}

let accountSeq = 0;

export async function createAccount(services: Services, plan: PlanName = 'pro'): Promise<TestAccount> {
  const email = `user${++accountSeq}-${randomBytes(3).toString('hex')}@example.com`;
  const { account, apiKey } = await services.accounts.create({ email, plan });
  return { id: account.id, email, plan, key: apiKey, headers: { authorization: `Bearer ${apiKey}` } };
}

/** A minimal valid one-page document. */
export const HELLO = '\\documentclass{article}\n\\begin{document}\nHello, Quire.\n\\end{document}\n';

/**
 * Fails naming the first line where `actual` and `expected` differ. For generated files
 * compared whole: assert's diff of two documents of thousands of lines ran so long that the
 * test runner spun without reporting.
 */
export function assertSameLines(actual: string, expected: string, fix: string): void {
  const [a, b] = [actual.split('\n'), expected.split('\n')];
  const differs = a.findIndex((text, i) => text !== b[i]);
  const first = differs === -1 && a.length !== b.length ? Math.min(a.length, b.length) : differs;
  assert.ok(first === -1, `differs from line ${first + 1} (${JSON.stringify(a[first])} where ${JSON.stringify(b[first])} was expected): ${fix}`);
}
