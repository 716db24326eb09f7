// Retry-After on the wire (issue #14): the header is derived from the body's
// retry_after_seconds in src/errors.ts alone. A used-up quota (monthly or keyless daily) says
// when it resets but is not retryable, so it sends no header; a transient refusal sends the
// header equal to the body field. Counters are seeded, so nothing here runs TeX.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { anonymousDailyKey, anonymousHourlyKey, monthlyCompilesKey } from '../../src/quota/keys.js';
import { createAccount, HELLO, testApp, type TestApp } from '../helpers.js';

describe('Retry-After from retry_after_seconds', () => {
  const clock = new ManualClock(new Date('2026-03-10T10:20:00Z'));
  let t: TestApp;
  const seed = (key: string, used: number) =>
    t.services.db.kysely.insertInto('counters').values({ key, used, reserved: 0, expires_at: '2099-01-01T00:00:00.000Z' }).execute();
  const compile = (options: { headers?: Record<string, string>; ip?: string }) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: options.headers, remoteAddress: options.ip ?? '192.0.2.1' });

  before(async () => {
    t = await testApp({ clock, env: { QUIRE_ANON_HOURLY_CEILING: '5' } });
  });
  after(() => t.close());

  test('a used-up monthly quota: 429 rate_limit with retry_after_seconds to the reset, no Retry-After header', async () => {
    const free = await createAccount(t.services, 'free');
    await seed(monthlyCompilesKey(free.id, clock.now()), 50);
    const res = await compile({ headers: free.headers });
    assert.equal(res.statusCode, 429);
    const body = res.json();
    assert.equal(body.error, 'rate_limit');
    assert.equal(body.retryable, false);
    assert.equal(body.retry_after_seconds, (Date.parse('2026-04-01T00:00:00Z') - clock.now().getTime()) / 1000);
    assert.equal(res.headers['retry-after'], undefined);
  });

  test('a used-up keyless day: 429 anonymous_quota_exhausted with retry_after_seconds, no Retry-After header', async () => {
    await seed(anonymousDailyKey('192.0.2.7', clock.now()), 3);
    const res = await compile({ ip: '192.0.2.7' });
    assert.equal(res.statusCode, 429);
    const body = res.json();
    assert.equal(body.error, 'anonymous_quota_exhausted');
    assert.equal(body.retryable, false);
    assert.equal(body.retry_after_seconds, (Date.parse('2026-03-11T00:00:00Z') - clock.now().getTime()) / 1000);
    assert.equal(res.headers['retry-after'], undefined);
  });

  test('the keyless hourly ceiling: 503 anonymous_capacity_exhausted, Retry-After equal to retry_after_seconds', async () => {
    await seed(anonymousHourlyKey(clock.now()), 5);
    const res = await compile({ ip: '192.0.2.8' });
    assert.equal(res.statusCode, 503);
    const body = res.json();
    assert.equal(body.error, 'anonymous_capacity_exhausted');
    assert.equal(body.retryable, true);
    assert.equal(body.retry_after_seconds, 40 * 60);
    assert.equal(res.headers['retry-after'], '2400');
  });
});
