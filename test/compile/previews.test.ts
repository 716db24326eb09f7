// Previews (SPEC §4.1, §8.4): with a key, a document over the plan's page or source limit
// gets a truncated PDF instead of a refusal; size previews are budgeted per rolling day and
// run one at a time. Real TeX, real multi-page documents, ManualClock for the rolling day.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import type { PlanName } from '../../src/quota/plans.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const pagesDoc = (n: number, padding = 0) =>
  `\\documentclass{article}\n${'%'.repeat(padding)}\n\\begin{document}\n` +
  `${Array.from({ length: n }, (_, i) => `Page ${i + 1}.`).join('\\newpage\n')}\n\\end{document}\n`;

/** `\\loop` turns that keep one compile busy for a few seconds. */
const SLOW_LOOPS = 3_000_000;

function pdfPages(pdf: Buffer): number {
  const info = execFileSync('pdfinfo', ['-'], { input: pdf }).toString();
  return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
}

describe('previews', () => {
  const clock = new ManualClock(new Date('2026-06-01T08:00:00Z'));
  let t: TestApp;
  const compile = (payload: object, account: TestAccount) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });
  const fetchPdf = async (url: string) => {
    const parsed = new URL(url);
    return (await t.app.inject({ method: 'GET', url: parsed.pathname + parsed.search })).rawPayload;
  };

  before(async () => {
    t = await testApp({ clock });
  });
  after(() => t.close());

  test('page previews on every plan: the first pages the plan allows, total_pages and plan_required', async () => {
    const cases: Array<[PlanName, number, number, PlanName | null]> = [
      ['free', 7, 5, 'starter'],
      ['starter', 22, 20, 'pro'],
      ['pro', 101, 100, 'business'],
      ['business', 501, 500, null],
    ];
    for (const [plan, total, limit, required] of cases) {
      const account = await createAccount(t.services, plan);
      const res = await compile({ latex: pagesDoc(total) }, account);
      assert.equal(res.statusCode, 200, res.body.slice(0, 400));
      const body = res.json();
      assert.equal(body.preview, true, plan);
      assert.equal(body.truncated, true);
      assert.equal(body.pages, limit);
      assert.equal(body.total_pages, total);
      assert.equal(body.plan_required, required);
      assert.match(body.warning, /Preview only/);
      assert.equal(body.upgrade_url, 'http://quire.test/pricing');
      assert.equal(pdfPages(await fetchPdf(body.pdf_url)), limit);
      assert.equal(body.usage.used_this_month, 1, 'a preview is a delivered compile');
    }
  });

  test('a document within the limits is no preview', async () => {
    const account = await createAccount(t.services, 'free');
    const body = (await compile({ latex: pagesDoc(5) }, account)).json();
    assert.equal(body.pages, 5);
    assert.equal(body.preview, undefined);
    assert.equal(body.total_pages, undefined);
  });

  test('size previews: 5 per rolling day, then 413 latex_too_large with the budget fields', async () => {
    const free = await createAccount(t.services, 'free');
    const start = clock.now().getTime();
    const oversize = pagesDoc(2, 31 * 1024);
    for (let i = 0; i < 5; i++) {
      clock.set(new Date(start + i * 3600_000));
      const res = await compile({ latex: oversize }, free);
      assert.equal(res.statusCode, 200, res.body.slice(0, 400));
      const body = res.json();
      assert.equal(body.preview, true);
      assert.equal(body.truncated, false);
      assert.equal(body.pages, 2);
      assert.equal(body.total_pages, 2);
      assert.equal(body.plan_required, 'starter');
      assert.match(body.warning, /source is \d+ bytes/);
    }
    const refused = await compile({ latex: oversize }, free);
    assert.equal(refused.statusCode, 413);
    const error = refused.json();
    assert.equal(error.error, 'latex_too_large');
    assert.equal(error.preview_attempts_per_day, 5);
    assert.equal(error.preview_attempts_remaining_today, 0);
    assert.equal(error.limit, 30720);
    // In-limit sources still compile.
    assert.equal((await compile({ latex: HELLO }, free)).statusCode, 200);

    // Rolling: 24 h after the first preview, exactly one slot is free again.
    clock.set(new Date(start + 24 * 3600_000 + 1000));
    assert.equal((await compile({ latex: oversize }, free)).statusCode, 200);
    assert.equal((await compile({ latex: oversize }, free)).statusCode, 413);
    clock.set(new Date(start));
  });

  test('two simultaneous over-size compiles on one account: one previews, the other gets 429 preview_in_progress', async () => {
    const starter = await createAccount(t.services, 'starter');
    const oversize = pagesDoc(1, 101 * 1024);
    const [a, b] = await Promise.all([compile({ latex: oversize }, starter), compile({ latex: oversize }, starter)]);
    const statuses = [a.statusCode, b.statusCode].sort();
    assert.deepEqual(statuses, [200, 429]);
    const busy = (a.statusCode === 429 ? a : b);
    assert.equal(busy.json().error, 'preview_in_progress');
    assert.ok(busy.json().retry_after_seconds > 0);
    assert.equal(busy.headers['retry-after'], String(busy.json().retry_after_seconds));
    const preview = (a.statusCode === 200 ? a : b).json();
    assert.equal(preview.plan_required, 'pro');
    // The lock is released: the next one previews.
    assert.equal((await compile({ latex: oversize }, starter)).statusCode, 200);
  });

  test("Free, one compile in flight: a size preview behind a size preview gets SPEC's 429 preview_in_progress, behind a plain compile fair use's code", async () => {
    const free = await createAccount(t.services, 'free');
    // A few seconds of TeX, so the second request surely arrives while the first compiles.
    const slow = (mark: string, padding: number) =>
      `\\documentclass{article}\n%${mark}\n${'%'.repeat(padding)}\n\\newcount\\n\\begin{document}\nSlow.\\loop\\advance\\n by 1 \\ifnum\\n<${SLOW_LOOPS} \\repeat\n\\end{document}\n`;
    const whileCompiling = async (first: Promise<{ statusCode: number }>, started: () => Promise<boolean>, second: object) => {
      while (!(await started())) await new Promise((resolve) => setTimeout(resolve, 20));
      const answer = await compile(second, free);
      assert.equal((await first).statusCode, 200);
      return answer;
    };
    const previewing = () => t.services.compile.previews.inProgress(free.id);
    const inFlight = async () => (await t.app.inject({ url: '/api/v1/usage', headers: free.headers })).json().fair_use.compiles_in_flight > 0;

    // Behind a size preview: SPEC's code and its retry_after_seconds.
    const busy = await whileCompiling(compile({ latex: slow('a', 31 * 1024) }, free), previewing, { latex: slow('b', 31 * 1024) });
    assert.equal(busy.statusCode, 429, busy.body);
    assert.equal(busy.json().error, 'preview_in_progress');
    assert.equal(busy.json().retry_after_seconds, 10);
    assert.equal(busy.headers['retry-after'], '10');
    assert.equal(busy.json().retryable, true);
    // Behind a size preview, an in-limit compile is refused by fair use (it is no preview).
    const plain = await whileCompiling(compile({ latex: slow('c', 31 * 1024) }, free), previewing, { latex: slow('d', 0) });
    assert.equal(plain.json().error, 'too_many_concurrent_compiles');
    // Canary: behind a plain compile, a size preview keeps fair use's code (its one slot is taken, by no preview).
    const behindPlain = await whileCompiling(compile({ latex: slow('e', 0) }, free), inFlight, { latex: slow('f', 31 * 1024) });
    assert.equal(behindPlain.statusCode, 429);
    assert.equal(behindPlain.json().error, 'too_many_concurrent_compiles');
    // Refusals cost nothing: two previews and one compile delivered.
    assert.equal((await t.services.usage.monthly(free.id)).used, 3);
  });

  test('anonymous callers never get previews', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: pagesDoc(4) }, remoteAddress: '203.0.113.9' });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'page_limit_exceeded');
  });
});

describe('a failing preview store', () => {
  // Handed in at assembly (ServiceOptions.overrides), as any store is: the service has no setter.
  const down = async (): Promise<never> => {
    throw new Error('preview store down');
  };
  let t: TestApp;
  before(async () => {
    t = await testApp({ overrides: { previews: { begin: down, inProgress: down } } });
  });
  after(() => t.close());

  test('503 preview_unavailable for over-size sources, in-limit sources still compile', async () => {
    const free = await createAccount(t.services, 'free');
    const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: free.headers });
    const res = await compile({ latex: pagesDoc(1, 31 * 1024) });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error, 'preview_unavailable');
    assert.equal(res.json().retry_after_seconds, 60);
    assert.equal((await compile({ latex: HELLO })).statusCode, 200);
    assert.equal((await t.services.usage.monthly(free.id)).used, 1);
  });
});

describe('previews switched off', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { QUIRE_PREVIEWS: 'off' } });
  });
  after(() => t.close());

  test('over-limit documents are refused: page_limit_exceeded and latex_too_large', async () => {
    const free = await createAccount(t.services, 'free');
    const pages = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: pagesDoc(7) }, headers: free.headers });
    assert.equal(pages.statusCode, 422);
    assert.deepEqual(
      { error: pages.json().error, pages: pages.json().pages, limit: pages.json().limit, plan: pages.json().plan },
      { error: 'page_limit_exceeded', pages: 7, limit: 5, plan: 'free' },
    );
    const size = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: pagesDoc(1, 31 * 1024) }, headers: free.headers });
    assert.equal(size.statusCode, 413);
    assert.equal(size.json().error, 'latex_too_large');
    assert.equal((await t.services.usage.monthly(free.id)).used, 0);
  });
});
