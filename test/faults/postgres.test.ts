// PostgreSQL faults: a dropped connection under an idle pool, and the whole server gone and
// back. The node stays alive (an uncaught error here would end the test process), requests
// that need the database get 503 database_unavailable with Retry-After while it is down,
// /health says so, and everything works again once it is back, without a restart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { privatePostgres, type PrivatePostgres } from './servers.js';

describe('a dropped PostgreSQL connection under an idle pool', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp({ db: 'postgres' });
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  test('leaves the node alive and the next request works', async () => {
    // Warm several pooled connections, then let them sit idle.
    await Promise.all(Array.from({ length: 4 }, () => t.app.inject({ url: '/api/v1/usage', headers: account.headers })));
    const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    const dbName = new URL(t.services.config.databaseUrl).pathname.slice(1);
    const { rows } = await admin.query(
      'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [dbName],
    );
    await admin.end();
    assert.ok(rows.length >= 1, 'at least one of our backends was terminated');
    await new Promise((r) => setTimeout(r, 200));

    const res = await t.app.inject({ url: '/api/v1/usage', headers: account.headers });
    assert.equal(res.statusCode, 200, res.body);
    const health = await t.app.inject({ url: '/health' });
    assert.equal(health.statusCode, 200, health.body);
  });
});

describe('PostgreSQL down and back', () => {
  let server: PrivatePostgres;
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    server = await privatePostgres();
    t = await testApp({ env: { QUIRE_DATABASE_URL: server.url } });
    account = await createAccount(t.services, 'pro');
  });
  after(async () => {
    await server.start().catch(() => {});
    await t.close();
    await server.destroy();
  });

  test('503 database_unavailable with Retry-After while down, /health 503, then recovery', async () => {
    assert.equal((await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).statusCode, 200);
    await server.stop();

    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await t.app.inject({ url: '/api/v1/usage', headers: account.headers });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error, 'database_unavailable');
      assert.equal(res.json().retryable, true);
      assert.equal(res.json().retry_after_seconds, 5);
      assert.equal(res.headers['retry-after'], '5');
      assert.ok(Date.now() - started < 6000, 'fails fast rather than hanging');
    }
    const health = await t.app.inject({ url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().status, 'degraded');
    assert.equal(health.json().database.ok, false);
    assert.equal(health.json().database.dialect, 'postgres');
    assert.match(health.json().database.error, /ECONNREFUSED|connect/);
    assert.deepEqual(health.json().blob_store, { ok: true });

    await server.start();
    const res = await t.app.inject({ url: '/api/v1/usage', headers: account.headers });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
  });
});
