// Quota counters in a real Redis (127.0.0.1:6379, or QUIRE_TEST_REDIS): the same contract as
// the SQL counters, leases that free the slot of a node that died, and the service using them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisCounters, RESERVATION_LEASE_MS } from '../../src/quota/redis-counters.js';
import { createAccount, HELLO, testApp } from '../helpers.js';
import { counterContract } from './counter-contract.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';

describe('Redis counters', () => {
  const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  let clock = Date.now();
  let counters: RedisCounters;
  before(() => {
    redis = new Redis(REDIS_URL);
    counters = new RedisCounters(redis, prefix, () => clock);
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  counterContract(() => counters);

  test('a reservation whose node never finished frees its slot when the lease ends', async () => {
    const expires = new Date(clock + 86_400_000);
    assert.equal((await counters.tryReserve('k:lease', 1, expires)).ok, true);
    assert.equal((await counters.tryReserve('k:lease', 1, expires)).ok, false);
    clock += RESERVATION_LEASE_MS + 1;
    assert.deepEqual(await counters.get('k:lease'), { used: 0, reserved: 0 });
    assert.equal((await counters.tryReserve('k:lease', 1, expires)).ok, true);
  });

  test('counters expire with their period', async () => {
    const expires = new Date(Date.now() + 60_000);
    await counters.tryReserve('k:ttl', 5, expires);
    await counters.commit('k:ttl');
    const ttl = await redis.pttl(`${prefix}k:ttl:used`);
    assert.ok(ttl > 0, 'the used count carries an expiry');
  });
});

describe('the service on Redis counters', () => {
  test('compiles are counted in Redis and reported by usage', async () => {
    const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
    const t = await testApp({ env: { QUIRE_REDIS_URL: REDIS_URL, QUIRE_REDIS_PREFIX: prefix } });
    const redis = new Redis(REDIS_URL);
    try {
      assert.ok(t.services.counters instanceof RedisCounters);
      const account = await createAccount(t.services, 'starter');
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(res.statusCode, 200);
      const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
      assert.equal(usage.usage.used_this_month, 1);
      assert.ok((await redis.keys(`${prefix}compiles:account:${account.id}:*`)).length > 0, 'the count is in Redis');
    } finally {
      await t.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
