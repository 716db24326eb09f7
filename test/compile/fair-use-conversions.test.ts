// Conversions count in fair use (issue 37, item 6), with real Ghostscript in the real sandbox:
// one Free key (one compile in flight) sends an EPS that loops forever (a PostScript `{} loop`)
// to compile, validate and the asset library at once. One conversion runs to its 15 s timeout;
// every other request gets the 429 a second compile gets; the timed-out conversion's time is
// charged to the failure budget. The canary: the running one really ran Ghostscript into its
// timeout (its message says so), so the 429s are not a conversion that never started.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const LOOPING_EPS = Buffer.from('%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n{ 1 pop } loop\n').toString('base64');
const USES_IT = '\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n\\includegraphics{loop.eps}\n\\end{document}\n';

describe('SVG and EPS conversions take the caller\'s in-flight slot and failure budget', () => {
  let t: TestApp;
  let free: TestAccount;
  let starter: TestAccount;
  before(async () => {
    t = await testApp();
    [free, starter] = await Promise.all([createAccount(t.services, 'free'), createAccount(t.services, 'starter')]);
  });
  after(() => t.close());

  const post = (url: string, who: TestAccount, payload: object) => t.app.inject({ method: 'POST', url, headers: who.headers, payload });
  const fairUse = async (who: TestAccount) => (await t.app.inject({ url: '/api/v1/usage', headers: who.headers })).json().fair_use as { compiles_in_flight: number; failure_seconds_used: number };

  test('a looping EPS from one Free key: one conversion runs, the others get 429, its time is charged', async () => {
    assert.equal((await fairUse(free)).failure_seconds_used, 0);
    const started = performance.now();
    const first = post('/api/v1/compile', free, { latex: USES_IT, assets: { 'loop.eps': LOOPING_EPS } });
    // Let the first conversion start before the others arrive.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await fairUse(free)).compiles_in_flight, 1, 'the conversion holds the slot');
    const others = await Promise.all([
      ...[1, 2, 3].map(() => post('/api/v1/compile', free, { latex: USES_IT, assets: { 'loop.eps': LOOPING_EPS } })),
      ...[1, 2].map(() => post('/api/v1/validate', free, { latex: USES_IT, assets: { 'loop.eps': LOOPING_EPS } })),
    ]);
    for (const res of others) {
      assert.equal(res.statusCode, 429, res.body);
      assert.equal(res.json().error, 'too_many_concurrent_compiles');
      assert.equal(res.headers['retry-after'], '5');
    }
    const res = await first;
    const seconds = (performance.now() - started) / 1000;
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'invalid_asset_format');
    assert.match(res.json().message, /took longer than 15 s/, 'the canary: Ghostscript ran into its timeout');
    console.log(`looping EPS: the compile answered after ${seconds.toFixed(1)} s; ${others.length} concurrent requests got 429`);
    const after = await fairUse(free);
    assert.equal(after.compiles_in_flight, 0, 'the slot went back');
    assert.ok(after.failure_seconds_used >= 14, `failure time charged: ${after.failure_seconds_used} s`);
  });

  test('validate\'s conversion and an asset upload hold the slot too, and a failed one is charged', async () => {
    const before = (await fairUse(starter)).failure_seconds_used;
    const validating = post('/api/v1/validate', starter, { latex: USES_IT, assets: { 'loop.eps': LOOPING_EPS } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Starter has two slots: the validate holds one, an upload of the same EPS the other.
    const uploading = post('/api/v1/assets', starter, { name: 'loop.eps', content_base64: LOOPING_EPS });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await fairUse(starter)).compiles_in_flight, 2);
    const third = await post('/api/v1/compile', starter, { latex: '\\documentclass{article}\\begin{document}x\\end{document}' });
    assert.equal(third.statusCode, 429, third.body);
    assert.equal(third.json().error, 'too_many_concurrent_compiles');

    const report = await validating;
    assert.equal(report.statusCode, 200, report.body);
    const finding = (report.json().findings as Array<{ code?: string; message: string }>).find((f) => f.code === 'invalid_asset_format');
    assert.match(finding?.message ?? '', /took longer than 15 s/, 'the canary: validate ran Ghostscript into its timeout');
    const upload = await uploading;
    assert.equal(upload.statusCode, 422, upload.body);
    assert.equal(upload.json().error, 'invalid_asset_format');
    const after = await fairUse(starter);
    assert.equal(after.compiles_in_flight, 0);
    assert.ok(after.failure_seconds_used - before >= 28, `both timed-out conversions charged: ${after.failure_seconds_used - before} s`);
  });
});
