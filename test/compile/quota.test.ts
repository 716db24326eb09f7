// Exact counting under concurrency on both databases: 10 simultaneous compiles against 3
// remaining succeed exactly 3 times, and the counter ends exactly at the limit. The per-caller
// limit on compiles in flight (docs/fair-use.md) is raised to 10 here: this is about the counter.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { createAccount, DB_KINDS, HELLO, testApp } from '../helpers.js';

for (const db of DB_KINDS) {
  describe(`quota under concurrency (${db})`, () => {
    test('10 parallel compiles against 3 remaining: exactly 3 succeed', async () => {
      const clock = new ManualClock(new Date('2026-05-20T08:00:00Z'));
      const t = await testApp({ db, clock, env: { QUIRE_CALLER_CONCURRENCY_FACTOR: '10' } });
      try {
        const free = await createAccount(t.services, 'free');
        const key = monthlyCompilesKey(free.id, clock.now());
        await t.services.db.kysely
          .insertInto('counters')
          .values({ key, used: 47, reserved: 0, expires_at: '2099-01-01T00:00:00.000Z' })
          .execute();

        const responses = await Promise.all(
          Array.from({ length: 10 }, () =>
            t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: free.headers }),
          ),
        );
        const statuses = responses.map((r) => r.statusCode).sort();
        assert.deepEqual(statuses, [...Array(3).fill(200), ...Array(7).fill(429)]);
        for (const r of responses.filter((r) => r.statusCode === 429)) assert.equal(r.json().error, 'rate_limit');
        assert.deepEqual(await t.services.counters.get(key), { used: 50, reserved: 0 });

        const usage = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: free.headers });
        assert.equal(usage.json().usage.used_this_month, 50);
      } finally {
        await t.close();
      }
    });
  });
}
