// How long a job would wait for a slot, and Retry-After for a refused one (drain.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DrainEstimate } from '../../src/queue/drain.js';

test('the wait and Retry-After follow how long jobs hold a slot, the jobs ahead and the slots; Retry-After within 1–60 s', () => {
  const drain = new DrainEstimate();
  assert.equal(drain.waitMs(16, 2), 0, 'no bound before any job finished');
  assert.equal(drain.retryAfterSeconds(16, 2), 5, 'and a first guess');
  drain.observe(200);
  // 16 ahead and the caller, 200 ms each, two slots: 1.7 s.
  assert.equal(drain.waitMs(16, 2), 1700);
  assert.equal(drain.retryAfterSeconds(16, 2), 2);
  assert.equal(drain.retryAfterSeconds(0, 2), 1, 'never below a second');
  for (let i = 0; i < 100; i++) drain.observe(3000);
  assert.equal(drain.retryAfterSeconds(16, 2), 26);
  assert.equal(drain.retryAfterSeconds(16, 0), 51, 'no slot counts as one');
  assert.equal(drain.retryAfterSeconds(1000, 2), 60, 'never above a minute');
  // A recent slow job moves the mean a tenth of the way.
  const fresh = new DrainEstimate();
  fresh.observe(1000);
  fresh.observe(11_000);
  assert.equal(fresh.waitMs(1, 1), 4000);
});

test('too long: past the bound and past two job lengths, never with nothing ahead', () => {
  const drain = new DrainEstimate();
  assert.equal(drain.tooLong(50, 3, 1000), false, 'no estimate yet');
  for (let i = 0; i < 100; i++) drain.observe(300);
  // One-pagers, three slots: 100 ms per job ahead (and the job's own turn).
  assert.equal(drain.tooLong(9, 3, 1000), false);
  assert.equal(drain.tooLong(10, 3, 1000), true);
  assert.equal(drain.tooLong(0, 1, 100), false, 'next in line');
  const theses = new DrainEstimate();
  theses.observe(10_000);
  // Ten-second jobs, three slots: a queue of five waits 20 s, two job lengths.
  assert.equal(theses.tooLong(5, 3, 1000), false);
  assert.equal(theses.tooLong(6, 3, 1000), true);
});

