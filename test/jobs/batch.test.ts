// Batch render with real TeX: one entry per item in order, a bad item fails alone with its own
// error body and costs nothing, each good item is charged once, merge: true adds one PDF made
// by qpdf, Idempotency-Key replays the same batch job, and whole-batch refusals come at once.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { startReceiver, waitForJob } from './receiver.js';

const TEMPLATE = '\\documentclass{article}\\begin{document}Dear {{ name }}, you owe {{ amount }}.\\end{document}';

function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'quire-batch-test-'));
  try {
    writeFileSync(join(dir, 'a.pdf'), pdf);
    return execFileSync('pdftotext', [join(dir, 'a.pdf'), '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('batch render', () => {
  let t: TestApp;
  let pro: TestAccount;
  let templateId: number;

  before(async () => {
    t = await testApp({ env: { QUIRE_WEBHOOK_ALLOW_PRIVATE: '1', QUIRE_WEBHOOK_ALLOW_HTTP: '1' } });
    pro = await createAccount(t.services, 'pro');
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'dunning', latex_with_placeholders: TEMPLATE } });
    templateId = created.json().template.id;
  });
  after(() => t.close());

  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;
  const fetchPdf = async (url: string) => (await t.app.inject({ url: url.replace('http://quire.test', '') })).rawPayload;

  it('one result per item, a bad item fails alone, merge joins the good ones; the webhook carries the result', async () => {
    const receiver = await startReceiver();
    try {
      const before = await used();
      const request = {
        method: 'POST' as const,
        url: `/api/v2/templates/${templateId}/render_batch`,
        headers: { ...pro.headers, 'idempotency-key': 'batch-1' },
        payload: { items: [{ name: 'Ada', amount: 10 }, { name: 'Bob' }, 'not an object', { name: 'Cy', amount: 30 }], merge: true, callback_url: receiver.url },
      };
      const res = await t.app.inject(request);
      assert.equal(res.statusCode, 202);
      assert.equal(res.json().status, 'queued');
      const replay = await t.app.inject(request);
      assert.equal(replay.json().job_id, res.json().job_id);

      const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: pro.headers })).json(), undefined, 60_000);
      assert.equal(job.kind, 'render_batch');
      assert.equal(job.status, 'succeeded');
      type Entry = { index: number; status: number; result: { pdf_url: string; template: { id: number } }; error: { error: string; missing_fields?: string[] } };
      const result = job.result as { template_id: number; items: Entry[]; succeeded: number; failed: number; merged: { pages: number; items_merged: number; pdf_url: string } };
      assert.equal(result.template_id, templateId);
      assert.deepEqual(result.items.map((i) => [i.index, i.status]), [[0, 200], [1, 422], [2, 422], [3, 200]]);
      assert.equal(result.items[1]!.error.error, 'schema_validation_failed');
      assert.deepEqual(result.items[1]!.error.missing_fields, ['amount']);
      assert.equal(result.items[2]!.error.error, 'invalid_data_shape');
      assert.equal(result.succeeded, 2);
      assert.equal(result.failed, 2);
      assert.match(pdfText(await fetchPdf(result.items[0]!.result.pdf_url)), /Dear Ada, you owe 10\./);
      assert.equal(result.items[3]!.result.template.id, templateId);

      assert.equal(result.merged.pages, 2);
      assert.equal(result.merged.items_merged, 2);
      const merged = pdfText(await fetchPdf(result.merged.pdf_url));
      assert.match(merged, /Dear Ada, you owe 10\.[\s\S]*Dear Cy, you owe 30\./);
      assert.equal(await used(), before + 2, 'each good item charged once; failures, the merge and the replay cost nothing');

      const [delivery] = await receiver.waitFor(1);
      const payload = JSON.parse(delivery!.body);
      assert.equal(payload.type, 'compile.succeeded');
      assert.deepEqual(payload.data, result);
    } finally {
      await receiver.close();
    }
  });

  it('whole-batch refusals come at once: size, shape, unknown template, raw template, anonymous, Free plan', async () => {
    const post = (payload: unknown, headers = pro.headers, id: number | string = templateId) =>
      t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render_batch`, headers, payload: payload as object });
    const tooMany = await post({ items: Array.from({ length: 51 }, () => ({ name: 'x', amount: 1 })) });
    assert.equal(tooMany.statusCode, 422);
    assert.equal(tooMany.json().error, 'validation_failed');
    assert.equal(tooMany.json().fields[0].limit, 50);
    assert.equal((await post({ items: [] })).json().error, 'validation_failed');
    assert.equal((await post({ items: [{}], extra: 1 })).json().error, 'validation_failed');
    const missing = await post({ items: [{}] }, pro.headers, 999999);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error, 'template_not_found');
    const raw = await t.app.inject({ method: 'POST', url: '/api/v1/templates', headers: pro.headers, payload: { name: 'raw', latex_content: '\\documentclass{article}\\begin{document}x\\end{document}' } });
    const mismatch = await post({ items: [{}] }, pro.headers, raw.json().template?.id ?? raw.json().id);
    assert.equal(mismatch.statusCode, 422);
    assert.equal(mismatch.json().error, 'template_engine_mismatch');
    assert.equal((await post({ items: [{}] }, {})).statusCode, 401);
    const free = await createAccount(t.services, 'free');
    assert.equal((await post({ items: [{}] }, free.headers)).json().error, 'plan_required');
    const badUrl = await post({ items: [{}], callback_url: 'ftp://x' });
    assert.equal(badUrl.json().error, 'invalid_callback_url');
  });
});

describe('batch render under the failure budget', () => {
  let t: TestApp;
  before(async () => {
    // Starter's 300 s of free failure time × 0.01: a few failing items use it up.
    t = await testApp({ env: { QUIRE_FAILURE_BUDGET_FACTOR: '0.01' } });
  });
  after(() => t.close());

  it('failing items spend the caller\'s failure budget; once it is gone the rest are 429 without TeX', async () => {
    const starter = await createAccount(t.services, 'starter');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v2/templates',
      headers: starter.headers,
      // Each item counts to half a million (about 0.1 s of TeX a pass on this machine, more on
      // slower ones) before its error: 30 items always cost more than the 3 s budget.
      payload: { name: 'broken', latex_with_placeholders: '\\documentclass{article}\\begin{document}{{ name }} \\count255=0 \\loop\\advance\\count255 by1 \\ifnum\\count255<500000 \\repeat \\nosuchcommandanywhere\\end{document}' },
    });
    const id = created.json().template.id as number;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v2/templates/${id}/render_batch`,
      headers: starter.headers,
      payload: { items: Array.from({ length: 30 }, (_, i) => ({ name: `Item ${i}` })) },
    });
    assert.equal(res.statusCode, 202);
    const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: starter.headers })).json(), undefined, 120_000);
    assert.equal(job.status, 'succeeded');
    const items = (job.result as { items: Array<{ index: number; status: number; error: { error: string; retry_after_seconds?: number } }> }).items;
    assert.equal(items.length, 30);
    const failed = items.filter((item) => item.error?.error === 'compilation_failed').length;
    const refused = items.filter((item) => item.error?.error === 'failure_budget_exhausted');
    console.log(`batch of 30 failing items with a 3 s failure budget: ${failed} ran TeX and failed, ${refused.length} refused`);
    assert.ok(failed >= 1 && failed < 30, `${failed} items ran TeX`);
    assert.equal(failed + refused.length, 30);
    const firstRefused = items.findIndex((item) => item.error?.error === 'failure_budget_exhausted');
    assert.ok(items.slice(firstRefused).every((item) => item.status === 429), 'once the budget is gone, every later item is refused');
    assert.ok(refused.every((item) => (item.error.retry_after_seconds ?? 0) >= 1));
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: starter.headers })).json();
    assert.equal(usage.usage.used_this_month, 0, 'failures cost no quota');
    assert.ok(usage.fair_use.failure_seconds_used >= usage.fair_use.failure_budget_seconds);
  });
});
