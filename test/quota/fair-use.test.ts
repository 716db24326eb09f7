// Fair use on every counter backend (SQLite, PostgreSQL, Redis): compiles in flight per
// caller, the failure-time budget per window (failures count, successes do not), the probe
// cap per minute, and what /usage reports of them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { Caller } from '../../src/accounts/caller.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { isServiceError, type ServiceError } from '../../src/errors.js';
import { SqlCounters, type Counters } from '../../src/quota/counters.js';
import { FairUse } from '../../src/quota/fair-use.js';
import { FAIR_USE, PROBES_PER_MINUTE } from '../../src/quota/plans.js';
import { RedisCounters } from '../../src/quota/redis-counters.js';
import { DB_KINDS, testServices, type TestServices } from '../helpers.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const keyless: Caller = { kind: 'anonymous', ip: '203.0.113.9' };
const free = { kind: 'account', ip: '198.51.100.1', account: { id: 77, plan: 'free' } } as unknown as Caller;

async function refusal(work: Promise<unknown>): Promise<ServiceError> {
  try {
    await work;
  } catch (err) {
    if (isServiceError(err)) return err;
    throw err;
  }
  assert.fail('expected a refusal');
}

function contract(setup: () => { counters: Counters; clock: ManualClock }): void {
  const fairOf = () => {
    const { counters, clock } = setup();
    const config = loadConfig({ QUIRE_DATA_DIR: '/tmp/quire-fair-config', QUIRE_SECRET: 'test-secret-0123456789abcdef' });
    return { fair: new FairUse(counters, clock, config), clock };
  };

  test('a keyless address has one compile in flight; the second is 429 with Retry-After until the first ends', async () => {
    const { fair } = fairOf();
    const first = await fair.admit(keyless);
    const err = await refusal(fair.admit(keyless));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'too_many_concurrent_compiles');
    assert.deepEqual(err.details, { plan: 'anonymous', limit: 1, in_flight: 1, retryable: true, retry_after_seconds: 5 });
    assert.equal(err.headers['retry-after'], '5');
    assert.equal((await fair.report(keyless)).compiles_in_flight, 1);
    await first.finish(true);
    const again = await fair.admit(keyless);
    await again.finish(true);
  });

  test('failures spend the budget, successes do not; over it, 429 failure_budget_exhausted until the window resets', async () => {
    const { fair, clock } = fairOf();
    const budgetMs = FAIR_USE.free.failureSeconds * 1000;
    const ok = await fair.admit(free);
    ok.spend(budgetMs * 2);
    await ok.finish(true);
    assert.equal((await fair.report(free)).failure_seconds_used, 0, 'a delivered PDF costs no failure time');
    const failed = await fair.admit(free);
    failed.spend(budgetMs - 1000);
    assert.equal(failed.overBudget, false);
    failed.spend(1000);
    assert.equal(failed.overBudget, true, 'probes stop once the compile itself reaches the budget');
    await failed.finish(false);
    const report = await fair.report(free);
    assert.equal(report.failure_seconds_used, FAIR_USE.free.failureSeconds);
    assert.equal(report.compiles_in_flight, 0);
    const err = await refusal(fair.admit(free));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'failure_budget_exhausted');
    const resets = new Date(report.failure_window_resets_at).getTime();
    const seconds = Math.ceil((resets - clock.ms()) / 1000);
    assert.equal(err.headers['retry-after'], String(seconds));
    assert.equal(err.details.used_seconds, FAIR_USE.free.failureSeconds);
    assert.equal(err.details.budget_seconds, FAIR_USE.free.failureSeconds);
    assert.match(err.message, /compiles resume at/);
    clock.set(new Date(resets));
    const next = await fair.admit(free);
    await next.finish(false);
  });

  test('a failure that ends in the next window is charged to that window, the one the caller sees', async () => {
    const { fair, clock } = fairOf();
    const other = { kind: 'account', ip: '198.51.100.2', account: { id: 78, plan: 'free' } } as unknown as Caller;
    const resets = new Date((await fair.report(other)).failure_window_resets_at).getTime();
    clock.set(new Date(resets - 5_000));
    const failed = await fair.admit(other);
    failed.spend(15_000);
    clock.set(new Date(resets + 10_000));
    await failed.finish(false);
    assert.equal((await fair.report(other)).failure_seconds_used, 15, 'charged where it ended (a clean-clone run once read 0 s here)');
  });

  test(`at most ${PROBES_PER_MINUTE} diagnosis probes per caller per minute`, async () => {
    const { fair, clock } = fairOf();
    clock.set(new Date(Math.ceil(clock.ms() / 60_000) * 60_000 + 60_000));
    const taken = [];
    for (let i = 0; i <= PROBES_PER_MINUTE; i++) taken.push(await fair.take(keyless));
    assert.deepEqual(taken, [...Array(PROBES_PER_MINUTE).fill(true), false]);
    assert.equal(await fair.take(free), true, 'another caller has its own probes');
    clock.advance(60_000);
    assert.equal(await fair.take(keyless), true);
  });
}

for (const db of DB_KINDS) {
  describe(`fair use on ${db}`, () => {
    let services: TestServices;
    const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
    let counters: SqlCounters;
    before(async () => {
      services = await testServices({ db });
      counters = new SqlCounters(services.db.kysely, services.db.dialect, () => clock.ms());
    });
    after(() => services.cleanup());
    contract(() => ({ counters, clock }));
  });
}

describe('fair use on Redis', () => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  const prefix = `quire-test-fair-${randomBytes(4).toString('hex')}:`;
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 600_000) * 600_000 + 1000));
  let counters: RedisCounters;
  before(async () => {
    await redis.connect();
    counters = new RedisCounters(redis, prefix, () => clock.ms());
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  contract(() => ({ counters, clock }));
});
