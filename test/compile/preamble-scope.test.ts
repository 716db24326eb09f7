// The compile service hands every job its preamble-cache scope and UTC day (tex/caches/preamble.ts):
// the caller's account for compiles, the shared gallery pool for public gallery renders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import type { TexJob } from '../../src/tex/job.js';
import { createAccount, HELLO, testApp } from '../helpers.js';

test('compiles carry the account scope and the UTC day; public gallery renders the gallery pool', async () => {
  const clock = new ManualClock(new Date('2026-05-20T23:30:00Z'));
  const t = await testApp({ clock });
  try {
    const seen: Array<TexJob['preamble']> = [];
    const jobs = t.services.texQueue;
    const run = jobs.run.bind(jobs);
    jobs.run = (job) => {
      seen.push(job.preamble);
      return run(job);
    };
    const alice = await createAccount(t.services, 'pro');
    const compiled = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: alice.headers });
    assert.equal(compiled.statusCode, 200);
    assert.deepEqual(seen.at(-1), { scope: `account:${alice.id}`, day: '2026-05-20' });

    const { slug } = t.services.gallery.list()[0]!;
    const { sample_data } = t.services.gallery.detail(slug);
    const rendered = await t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, payload: { data: sample_data }, headers: alice.headers });
    assert.equal(rendered.statusCode, 200, rendered.body);
    assert.deepEqual(seen.at(-1), { scope: 'gallery', day: '2026-05-20' });
  } finally {
    await t.close();
  }
});
