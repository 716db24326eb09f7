// How the service answers when TeX's PDF cannot be used as it stands (SPEC §7.1): its size
// cannot be measured (pdf_size_unknown), or the whole document passed the compile ceiling
// before a preview slice could be cut (pdf_too_large with plan_limit). TeX runs for real;
// only its outcome is replaced, as a 100 MB PDF would take the suite minutes to produce.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PREVIEW_PDF_CEILING } from '../../src/compile/request.js';
import { PLANS } from '../../src/quota/plans.js';
import { createAccount, HELLO, testApp, type TestApp } from '../helpers.js';

describe('pdf_size_unknown', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  test('422 pdf_size_unknown, retryable, costs no quota, and the retry succeeds', async () => {
    const account = await createAccount(t.services, 'starter');
    const jobs = t.services.texQueue;
    const run = jobs.run.bind(jobs);
    jobs.run = async (job) => ({ ...(await run(job)), outcome: 'unmeasurable', pdf: undefined, pages: undefined });
    try {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(res.statusCode, 422);
      const body = res.json();
      assert.equal(body.error, 'pdf_size_unknown');
      assert.equal(body.retryable, true);
      assert.equal(body.plan, 'starter');
    } finally {
      jobs.run = run;
    }
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
    assert.equal(usage.usage.used_this_month, 0, 'the failed measurement cost nothing');
    const retry = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
    assert.equal(retry.statusCode, 200);
  });

  test('422 pdf_too_large with limit (the compile ceiling) and plan_limit when the whole document is over it', async () => {
    const account = await createAccount(t.services, 'pro');
    const jobs = t.services.texQueue;
    const run = jobs.run.bind(jobs);
    let ceiling = 0;
    jobs.run = async (job) => {
      ceiling = job.maxFileBytes;
      return { ...(await run(job)), outcome: 'file_too_large', file: 'main.pdf', pdf: undefined, pages: undefined };
    };
    try {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(res.statusCode, 422);
      const body = res.json();
      assert.equal(body.error, 'pdf_too_large');
      assert.equal(ceiling, PREVIEW_PDF_CEILING, 'keyed compiles run under the compile ceiling');
      assert.equal(body.limit, PREVIEW_PDF_CEILING);
      assert.equal(body.plan_limit, PLANS.pro.maxPdfBytes);
      assert.equal(body.plan, 'pro');
    } finally {
      jobs.run = run;
    }
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
    assert.equal(usage.usage.used_this_month, 0);
  });
});
