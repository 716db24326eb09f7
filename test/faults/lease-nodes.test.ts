// Leases follow their node: a live node's heartbeat keeps its reservations past the lease
// length, a killed node's end within it, and a restarted node (same name, new instance) ends
// its predecessor's at once while other nodes' leases stay. On SQLite, PostgreSQL and Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { leaseOwner, RESERVATION_LEASE_MS, SqlCounters, type Counters, type LeaseOwner } from '../../src/quota/counters.js';
import { RedisCounters } from '../../src/quota/redis-counters.js';
import { DB_KINDS, testServices, type TestServices } from '../helpers.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const far = () => new Date(Date.now() + 86_400_000);

function contract(node: (owner: LeaseOwner) => Counters, advance: (ms: number) => void): void {
  test('a heart-beating node keeps its lease; a silent one loses it within the lease length', async () => {
    const a = node(leaseOwner('node-a'));
    const held = await a.tryReserve('nodes:beat', 1, far());
    assert.equal(held.ok, true);
    for (let i = 0; i < 4; i++) {
      advance(RESERVATION_LEASE_MS / 2);
      await a.heartbeat();
    }
    assert.equal((await a.tryReserve('nodes:beat', 1, far())).ok, false, 'held after twice the lease length');
    advance(RESERVATION_LEASE_MS + 1);
    assert.deepEqual(await a.get('nodes:beat'), { used: 0, reserved: 0 }, 'the node stopped beating: the slot is back');
  });

  test('a restarted node ends the leases of its previous instance at once, and only those', async () => {
    const killed = node(leaseOwner('node-b'));
    const other = node(leaseOwner('node-c'));
    assert.equal((await killed.tryReserve('nodes:restart', 3, far())).ok, true);
    assert.equal((await other.tryReserve('nodes:restart', 3, far())).ok, true);
    const restarted = node(leaseOwner('node-b'));
    assert.equal((await restarted.tryReserve('nodes:restart', 3, far())).ok, true);
    await restarted.endPreviousInstance();
    assert.deepEqual(await restarted.get('nodes:restart'), { used: 0, reserved: 2 }, "the other node's and the new instance's leases stay");
  });
}

for (const db of DB_KINDS) {
  describe(`lease nodes on ${db}`, () => {
    let services: TestServices;
    let now = Date.now();
    before(async () => {
      services = await testServices({ db });
    });
    after(() => services.cleanup());
    contract(
      (owner) => new SqlCounters(services.db.kysely, services.db.dialect, () => now, RESERVATION_LEASE_MS, owner),
      (ms) => (now += ms),
    );
  });
}

describe('lease nodes on Redis', () => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  const prefix = `quire-test-nodes-${randomBytes(4).toString('hex')}:`;
  let now = Date.now();
  before(() => redis.connect());
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  contract(
    (owner) => new RedisCounters(redis, prefix, () => now, { owner }),
    (ms) => (now += ms),
  );
});
