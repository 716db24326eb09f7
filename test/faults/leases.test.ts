// Reservations are leases on every backend: a reservation whose node died (reserved, then
// neither committed nor released) frees its slot when the lease ends, on SQLite, PostgreSQL
// and Redis alike. And through the service: a node killed mid-compile on PostgreSQL without
// Redis no longer takes the customer's last compile until next month.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/clock.js';
import { CompileQuota } from '../../src/quota/compile-quota.js';
import { RESERVATION_LEASE_MS, SqlCounters, type Counters } from '../../src/quota/counters.js';
import { RedisCounters } from '../../src/quota/redis-counters.js';
import { openDb } from '../../src/storage/db.js';
import { DB_KINDS, HELLO, testApp, testServices, type TestServices } from '../helpers.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';

function leaseContract(setup: () => { counters: Counters; advance(ms: number): void }): void {
  const expires = () => new Date(Date.now() + 86_400_000);

  test('a reservation never finished frees its slot when the lease ends', async () => {
    const { counters, advance } = setup();
    const dead = await counters.tryReserve('lease:dead', 1, expires());
    assert.equal(dead.ok, true);
    assert.equal(typeof dead.lease, 'string');
    assert.deepEqual(await counters.tryReserve('lease:dead', 1, expires()), { ok: false, used: 0, reserved: 1 });
    advance(RESERVATION_LEASE_MS - 1000);
    assert.equal((await counters.tryReserve('lease:dead', 1, expires())).ok, false, 'still held just before the end');
    advance(2000);
    assert.deepEqual(await counters.get('lease:dead'), { used: 0, reserved: 0 });
    const again = await counters.tryReserve('lease:dead', 1, expires());
    assert.equal(again.ok, true);
    await counters.commit('lease:dead', again.lease);
    assert.deepEqual(await counters.get('lease:dead'), { used: 1, reserved: 0 });
  });

  test('finishing an expired lease counts the work but never ends another node\'s lease', async () => {
    const { counters, advance } = setup();
    const slow = await counters.tryReserve('lease:slow', 1, expires());
    advance(RESERVATION_LEASE_MS + 1);
    const other = await counters.tryReserve('lease:slow', 2, expires());
    assert.equal(other.ok, true);
    await counters.commit('lease:slow', slow.lease);
    assert.deepEqual(await counters.get('lease:slow'), { used: 1, reserved: 1 }, 'the other lease is still held');
    await counters.release('lease:slow', other.lease);
    assert.deepEqual(await counters.get('lease:slow'), { used: 1, reserved: 0 });
  });
}

for (const db of DB_KINDS) {
  describe(`leases on ${db}`, () => {
    let services: TestServices;
    let now = Date.now();
    let counters: SqlCounters;
    before(async () => {
      services = await testServices({ db });
      counters = new SqlCounters(services.db.kysely, services.db.dialect, () => now);
    });
    after(() => services.cleanup());

    leaseContract(() => ({ counters, advance: (ms) => (now += ms) }));

    test('sweep drops ended leases', async () => {
      await counters.tryReserve('lease:sweep', 5, new Date(now + 86_400_000));
      now += RESERVATION_LEASE_MS + 1;
      await counters.sweep(new Date(now));
      const rows = await services.db.kysely.selectFrom('counter_leases').selectAll().where('key', '=', 'lease:sweep').execute();
      assert.deepEqual(rows, []);
    });
  });
}

describe('leases on PostgreSQL shared by two nodes', () => {
  let services: TestServices;
  const now = Date.now();
  let counters: SqlCounters;
  before(async () => {
    services = await testServices({ db: 'postgres' });
    counters = new SqlCounters(services.db.kysely, services.db.dialect, () => now);
  });
  after(() => services.cleanup());

  test('50 parallel reservations from two nodes against a limit of 20 take exactly 20', async () => {
    // A second node: its own connection pool on the same database.
    const other = await openDb(services.config.databaseUrl);
    try {
      const nodes = [counters, new SqlCounters(other.kysely, other.dialect, () => now)];
      const expires = new Date(now + 86_400_000);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => nodes[i % 2]!.tryReserve('lease:race', 20, expires)));
      assert.equal(results.filter((r) => r.ok).length, 20);
      assert.equal(new Set(results.map((r) => r.lease).filter(Boolean)).size, 20, 'every lease is distinct');
      assert.deepEqual(await counters.get('lease:race'), { used: 0, reserved: 20 });
    } finally {
      await other.close();
    }
  });
});

describe('leases on Redis', () => {
  const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  let now = Date.now();
  let counters: RedisCounters;
  before(() => {
    redis = new Redis(REDIS_URL);
    counters = new RedisCounters(redis, prefix, () => now);
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  leaseContract(() => ({ counters, advance: (ms) => (now += ms) }));
});

describe('a node killed mid-compile on PostgreSQL without Redis', () => {
  test('its reservations expire and the caller can compile again', async () => {
    const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
    const t = await testApp({ db: 'postgres', clock });
    try {
      const ip = '198.51.100.77';
      // The "dead node": three keyless compiles reserved, then the process vanished.
      const quota = new CompileQuota(t.services.counters, clock, t.services.config);
      for (let i = 0; i < 3; i++) await quota.reserve({ kind: 'anonymous', ip });
      const compile = () =>
        t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, remoteAddress: ip });

      const refused = await compile();
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.json().error, 'anonymous_quota_exhausted');

      clock.advance(RESERVATION_LEASE_MS + 1000);
      const res = await compile();
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().remaining_today, 2);
    } finally {
      await t.close();
    }
  });
});

describe('a commit resent after a lost reply (Redis)', () => {
  test('counts the work once', async () => {
    const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
    const redis = new Redis(REDIS_URL);
    try {
      const counters = new RedisCounters(redis, prefix);
      const taken = await counters.tryReserve('lease:resent', 5, new Date(Date.now() + 86_400_000));
      await counters.commit('lease:resent', taken.lease);
      await counters.commit('lease:resent', taken.lease);
      await counters.release('lease:resent', taken.lease);
      assert.deepEqual(await counters.get('lease:resent'), { used: 1, reserved: 0 });
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
