// Redis faults: a private redis-server (never the shared one) killed and restarted under a
// node that keeps its quota counters there. While it is down, requests that need it get 503
// redis_unavailable with Retry-After within a second or two, /health says so, and the node
// reconnects by itself when it is back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { privateRedis, type PrivateRedis } from './servers.js';

describe('Redis down and back', () => {
  let server: PrivateRedis;
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    server = await privateRedis();
    t = await testApp({ env: { QUIRE_REDIS_URL: server.url } });
    account = await createAccount(t.services, 'pro');
  });
  after(async () => {
    await t.close();
    await server.destroy();
  });

  const compile = () => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });

  test('503 redis_unavailable with Retry-After while down, /health 503, then recovery', async () => {
    assert.equal((await compile()).statusCode, 200);
    const healthy = await t.app.inject({ url: '/health' });
    assert.equal(healthy.statusCode, 200);
    assert.deepEqual(healthy.json().redis, { ok: true });

    await server.kill();
    for (const request of [compile, () => t.app.inject({ url: '/api/v1/usage', headers: account.headers })]) {
      const started = Date.now();
      const res = await request();
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error, 'redis_unavailable');
      assert.equal(res.json().retryable, true);
      assert.equal(res.headers['retry-after'], '5');
      assert.ok(Date.now() - started < 3000, `fails fast (took ${Date.now() - started} ms)`);
    }
    const health = await t.app.inject({ url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().status, 'degraded');
    assert.equal(health.json().redis.ok, false);
    assert.match(health.json().redis.error, /ECONNREFUSED/, 'the driver says why');
    assert.deepEqual(health.json().database, { ok: true, dialect: 'sqlite' });

    await server.start();
    // The client reconnects within its retry interval (at most a second).
    let res = await compile();
    for (let i = 0; i < 30 && res.statusCode === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await compile();
    }
    assert.equal(res.statusCode, 200, res.body);
    // The restarted Redis is empty: this compile is the first it counted.
    assert.equal(res.json().usage.used_this_month, 1);
    assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
  });
});
