// @quire/client (clients/typescript): its generated schema.ts is what openapi-typescript makes
// of the served document today, it builds, and the built package drives a real server:
// compile → download the PDF → V2 template → render → batch → async job with a signed webhook
// to a local receiver → refusals as typed values.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { assertSameLines, createAccount, HELLO, testApp, type TestApp } from '../helpers.js';
import { startReceiver, type Receiver } from '../jobs/receiver.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const sdk = join(root, 'clients', 'typescript');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

type Sdk = typeof import('../../clients/typescript/src/index.js');

describe('@quire/client', () => {
  let t: TestApp;
  let base: string;
  let receiver: Receiver;
  before(async () => {
    t = await testApp({ env: { QUIRE_WEBHOOK_ALLOW_HTTP: 'on', QUIRE_WEBHOOK_ALLOW_PRIVATE: 'on' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('schema.ts is what openapi-typescript makes of the served document (npm run sdk:generate)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-sdk-'));
    try {
      await writeFile(join(dir, 'openapi.json'), (await t.app.inject({ url: '/openapi.json' })).body);
      await run(bin('openapi-typescript'), [join(dir, 'openapi.json'), '-o', join(dir, 'schema.ts')]);
      assertSameLines(await readFile(join(sdk, 'src', 'schema.ts'), 'utf8'), await readFile(join(dir, 'schema.ts'), 'utf8'), 'clients/typescript/src/schema.ts is stale: run npm run sdk:generate');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the built package compiles, downloads, renders, batches, waits for a job, verifies its webhook and types refusals', async () => {
    await run(bin('tsc'), ['-p', join(sdk, 'tsconfig.json')]);
    const { compilePdf, createQuireClient, downloadPdf, verifyWebhook, waitForJob }: Sdk = await import(pathToFileURL(join(sdk, 'dist', 'index.js')).href);
    const pro = await createAccount(t.services, 'pro');
    const client = createQuireClient({ baseUrl: base, apiKey: pro.key });

    const compiled = await client.POST('/api/v1/compile', { body: { latex: HELLO } });
    assert.ok(compiled.data && 'pdf_url' in compiled.data, JSON.stringify(compiled.error));
    const pdfUrl = new URL(compiled.data.pdf_url);
    const pdf = await downloadPdf(`${base}${pdfUrl.pathname}${pdfUrl.search}`);
    assert.equal(Buffer.from(pdf.subarray(0, 5)).toString('latin1'), '%PDF-');
    // The PDF in the compile's own answer (extension: Accept: application/pdf), the body beside it.
    const inline = await compilePdf(client, { latex: HELLO });
    assert.equal(inline.error, undefined, JSON.stringify(inline.error));
    assert.equal(inline.result!.pages, 1);
    assert.equal(Buffer.from(inline.pdf!.subarray(0, 5)).toString('latin1'), '%PDF-');
    const notLatex = await compilePdf(client, { latex: 'plain text' });
    assert.equal(notLatex.error?.error, 'not_latex_source');
    assert.equal(notLatex.response.status, 422);

    const created = await client.POST('/api/v2/templates', {
      body: { name: 'letter', latex_with_placeholders: '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\n\\end{document}\n' },
    });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const id = String(created.data!.template.id);
    const rendered = await client.POST('/api/v2/templates/{id}/render', { params: { path: { id } }, body: { data: { name: 'Ada' } } });
    assert.ok(rendered.data && 'template' in rendered.data, JSON.stringify(rendered.error));
    assert.equal(rendered.data.template.name, 'letter');

    const batch = await client.POST('/api/v2/templates/{id}/render_batch', { params: { path: { id } }, body: { items: [{ name: 'Ada' }, { name: 'Grace' }] } });
    assert.equal(batch.response.status, 202, JSON.stringify(batch.error));
    const batchJob = await waitForJob(client, batch.data!.job_id, { intervalMs: 100 });
    assert.equal(batchJob.status, 'succeeded', JSON.stringify(batchJob));

    const secret = (await client.GET('/api/v1/webhooks/secret')).data!.secret;
    const accepted = await client.POST('/api/v1/compile', { body: { latex: HELLO, async: true, callback_url: receiver.url } });
    assert.ok(accepted.data && 'status_url' in accepted.data, JSON.stringify(accepted.error));
    const job = await waitForJob(client, accepted.data.job_id, { intervalMs: 100 });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const [delivery] = await receiver.waitFor(1);
    const payload = verifyWebhook(secret, delivery!.body, delivery!.headers) as { type: string; job_id: string };
    assert.deepEqual([payload.type, payload.job_id], ['compile.succeeded', accepted.data.job_id]);
    assert.throws(() => verifyWebhook(secret, `${delivery!.body} `, delivery!.headers), 'a changed body fails verification');

    const refused = await client.POST('/api/v1/compile', { body: { latex: 'plain words' } });
    assert.equal(refused.response.status, 422);
    assert.equal(refused.error?.error, 'not_latex_source');
    const anonymous = createQuireClient({ baseUrl: base });
    const denied = await anonymous.GET('/api/v1/usage');
    assert.equal(denied.error?.error, 'missing_api_key');
  });
});
