// The contract test: a real server on 127.0.0.1, every operation of the document it serves
// driven over real HTTP (successes and refusals), each response checked against that document
// (openapi-check.ts). An operation with no driver case fails the test, so a new route needs one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { makeCa, makeLeaf, p12 } from '../signing/pki.js';
import { startReceiver, type Receiver } from '../jobs/receiver.js';
import { operationsOf, ResponseChecker, type OpenApiDoc, type OperationRef } from './openapi-check.js';

const PNG = readFileSync(new URL('../fixtures/assets/logo.png', import.meta.url)).toString('base64');
const V2_SOURCE = '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\n\\end{document}\n';

interface Call {
  path?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: { body: string; type: string };
  /** The status this case is about (asserted, so the case cannot quietly test something else). */
  expect: number;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  json: () => Record<string, unknown>;
}

describe('the OpenAPI document against the real server', () => {
  let t: TestApp;
  let base: string;
  let doc: OpenApiDoc;
  let ops: Map<string, OperationRef>;
  let receiver: Receiver;
  const checker = new ResponseChecker();
  const violations: string[] = [];
  const covered = new Map<string, Set<number>>();

  before(async () => {
    t = await testApp({ env: { QUIRE_SIGNUP: 'open', QUIRE_WEBHOOK_ALLOW_HTTP: 'on', QUIRE_WEBHOOK_ALLOW_PRIVATE: 'on' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDoc;
    ops = operationsOf(doc);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  /** One request to `operationId`, checked against the document; returns the answer. */
  async function call(operationId: string, options: Call): Promise<Answer> {
    const ref = ops.get(operationId);
    assert.ok(ref, `no operation ${operationId} in the document`);
    const path = ref.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.path?.[name] ?? ''));
    const query = options.query ? `?${new URLSearchParams(options.query)}` : '';
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.raw) {
      headers['content-type'] = options.raw.type;
      body = options.raw.body;
    }
    const res = await fetch(`${base}${path}${query}`, { method: ref.method, headers, body });
    const buffer = Buffer.from(await res.arrayBuffer());
    violations.push(...checker.check(ref, res.status, res.headers, buffer));
    const statuses = covered.get(operationId) ?? new Set<number>();
    covered.set(operationId, statuses.add(res.status));
    assert.equal(res.status, options.expect, `${operationId}: ${buffer.toString('utf8').slice(0, 400)}`);
    return { status: res.status, headers: res.headers, body: buffer, json: () => JSON.parse(buffer.toString('utf8')) };
  }

  async function waitForJob(key: TestAccount, jobId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 300; i++) {
      const job = (await call('getJob', { path: { job_id: jobId }, headers: key.headers, expect: 200 })).json();
      if (job.status === 'succeeded' || job.status === 'failed') return job;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`job ${jobId} did not end`);
  }

  test('every operation answers as the document says (successes and refusals)', async () => {
    const pro = await createAccount(t.services, 'pro');
    const free = await createAccount(t.services, 'free');
    const state = { pdfPath: '', jobId: '', slug: '', sample: {} as unknown };

    /** One case list per operationId, in an order where later cases use what earlier ones made. */
    const drivers: Array<[string, () => Promise<void>]> = [
      ['getHealth', async () => void (await call('getHealth', { expect: 200 }))],
      [
        'getUsage',
        async () => {
          await call('getUsage', { headers: pro.headers, expect: 200 });
          await call('getUsage', { expect: 401 });
        },
      ],
      [
        'compile',
        async () => {
          const ok = (await call('compile', { json: { latex: HELLO }, expect: 200 })).json();
          state.pdfPath = new URL(ok.pdf_url as string).pathname + new URL(ok.pdf_url as string).search;
          await call('compile', { json: { latex: 'plain words' }, headers: pro.headers, expect: 422 });
          await call('compile', { json: { latex: HELLO, texlive: '1999' }, headers: pro.headers, expect: 422 });
          await call('compile', { json: { latex: HELLO, compiler: 'lualatex' }, headers: free.headers, expect: 403 });
          // Stored assets on Free: the library's plan check, declared on the operation's 403.
          assert.equal((await call('compile', { json: { latex: HELLO, use_stored_assets: ['logo.png'] }, headers: free.headers, expect: 403 })).json().error, 'plan_required');
          await call('compile', { raw: { body: '{"latex":', type: 'application/json' }, expect: 400 });
          await call('compile', { raw: { body: 'latex', type: 'application/xml' }, expect: 415 });
          await call('compile', { json: { latex: HELLO }, headers: { authorization: 'Bearer nope' }, expect: 401 });
          const accepted = (
            await call('compile', { json: { latex: HELLO, async: true, callback_url: receiver.url }, headers: pro.headers, expect: 202 })
          ).json();
          state.jobId = accepted.job_id as string;
        },
      ],
      [
        'getJob',
        async () => {
          const job = await waitForJob(pro, state.jobId);
          assert.equal(job.status, 'succeeded', JSON.stringify(job));
          await receiver.waitFor(1);
          await call('getJob', { path: { job_id: '00000000-0000-4000-8000-000000000000' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'downloadPdf',
        async () => {
          const url = new URL(state.pdfPath, base);
          const id = url.pathname.split('/').pop()!;
          const query = Object.fromEntries(url.searchParams);
          await call('downloadPdf', { path: { id }, query, expect: 200 });
          await call('downloadPdf', { path: { id }, query, headers: { range: 'bytes=0-99' }, expect: 206 });
          await call('downloadPdf', { path: { id }, query, headers: { range: 'bytes=99999999-' }, expect: 416 });
          await call('downloadPdf', { path: { id }, query: { ...query, sig: 'x'.repeat(64) }, expect: 403 });
        },
      ],
      [
        'downloadPageImage',
        async () => {
          const ok = (await call('compile', { json: { latex: HELLO, output: { page_images: { pages: [1], dpi: 72 } } }, headers: pro.headers, expect: 200 })).json();
          const images = ok.page_images as Array<{ url: string }>;
          const url = new URL(images[0]!.url);
          const [, id, page] = /\/pdfs\/([^/]+)\/pages\/([^/]+)$/.exec(url.pathname) ?? ['', '', ''];
          const query = Object.fromEntries(url.searchParams);
          await call('downloadPageImage', { path: { id, page }, query, expect: 200 });
          await call('downloadPageImage', { path: { id, page }, query: { ...query, sig: 'x'.repeat(64) }, expect: 403 });
          await call('downloadPageImage', { path: { id, page: '0.png' }, query, expect: 422 });
        },
      ],
      [
        'signUp',
        async () => {
          await call('signUp', { json: { email: 'contract@example.com' }, expect: 201 });
          await call('signUp', { json: { email: 'contract@example.com' }, expect: 409 });
          await call('signUp', { json: { mail: 'x' }, expect: 422 });
        },
      ],
      [
        'rotateApiKey',
        async () => {
          const other = await createAccount(t.services, 'free');
          await call('rotateApiKey', { headers: other.headers, expect: 200 });
          await call('rotateApiKey', { headers: other.headers, expect: 401 });
        },
      ],
      [
        'saveAsset',
        async () => {
          await call('saveAsset', { json: { name: 'logo.png', content_base64: PNG }, headers: pro.headers, expect: 201 });
          await call('saveAsset', { json: { name: 'logo.png', content_base64: PNG }, headers: pro.headers, expect: 200 });
          await call('saveAsset', { json: { name: 'bad name.png', content_base64: PNG }, headers: pro.headers, expect: 422 });
          await call('saveAsset', { json: { name: 'logo.png', content_base64: PNG }, headers: free.headers, expect: 403 });
        },
      ],
      ['listAssets', async () => void (await call('listAssets', { headers: pro.headers, expect: 200 }))],
      [
        'getAsset',
        async () => {
          await call('getAsset', { path: { id_or_name: 'logo.png' }, headers: pro.headers, expect: 200 });
          await call('getAsset', { path: { id_or_name: 'none.png' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'deleteAsset',
        async () => {
          await call('deleteAsset', { path: { id_or_name: 'logo.png' }, headers: pro.headers, expect: 204 });
          await call('deleteAsset', { path: { id_or_name: 'logo.png' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'saveTemplate',
        async () => {
          await call('saveTemplate', { json: { name: 'raw', latex_content: HELLO }, headers: pro.headers, expect: 201 });
          await call('saveTemplate', { json: { name: 'raw', description: 'Hello', texlive: '2026' }, headers: pro.headers, expect: 200 });
          await call('saveTemplate', { json: { name: 'raw', texlive: '1999' }, headers: pro.headers, expect: 422 });
          await call('saveTemplate', { json: { name: 'raw2', latex_content: HELLO, placeholder_engine: 'mustache' }, headers: pro.headers, expect: 422 });
        },
      ],
      ['listTemplates', async () => void (await call('listTemplates', { headers: pro.headers, expect: 200 }))],
      [
        'getTemplate',
        async () => {
          await call('getTemplate', { path: { id: 'raw' }, headers: pro.headers, expect: 200 });
          await call('getTemplate', { path: { id: 'nothing' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'promoteTemplate',
        async () => {
          await call('promoteTemplate', { path: { id: 'raw' }, json: {}, headers: pro.headers, expect: 200 });
          await call('promoteTemplate', { path: { id: 'raw' }, json: {}, headers: pro.headers, expect: 422 });
        },
      ],
      [
        'createTemplateV2',
        async () => {
          await call('createTemplateV2', { json: { name: 'letter', latex_with_placeholders: V2_SOURCE, texlive: '2026' }, headers: pro.headers, expect: 201 });
          await call('createTemplateV2', { json: { name: 'letter2', latex_with_placeholders: V2_SOURCE, texlive: '1999' }, headers: pro.headers, expect: 422 });
          await call('createTemplateV2', { json: { name: 'letter', latex_with_placeholders: V2_SOURCE }, headers: pro.headers, expect: 422 });
          await call('createTemplateV2', { json: { name: 'letter' }, headers: free.headers, expect: 403 });
        },
      ],
      ['listTemplatesV2', async () => void (await call('listTemplatesV2', { headers: pro.headers, expect: 200 }))],
      [
        'getTemplateV2',
        async () => {
          await call('getTemplateV2', { path: { id: 'letter' }, headers: pro.headers, expect: 200 });
          await call('getTemplateV2', { path: { id: 'nothing' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'updateTemplateV2',
        async () => {
          await call('updateTemplateV2', { path: { id: 'letter' }, json: { description: 'A letter' }, headers: pro.headers, expect: 200 });
          await call('updateTemplateV2', { path: { id: 'letter' }, json: { colour: 'red' }, headers: pro.headers, expect: 422 });
          await call('updateTemplateV2', { path: { id: 'letter' }, json: { texlive: '1999' }, headers: pro.headers, expect: 422 });
          await call('updateTemplateV2', { path: { id: 'letter' }, json: { texlive: null }, headers: pro.headers, expect: 200 });
        },
      ],
      [
        'listTemplateVersions',
        async () => {
          await call('listTemplateVersions', { path: { id: 'letter' }, headers: pro.headers, expect: 200 });
          await call('listTemplateVersions', { path: { id: 'nothing' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'getTemplateVersion',
        async () => {
          await call('getTemplateVersion', { path: { id: 'letter', version: '1' }, headers: pro.headers, expect: 200 });
          await call('getTemplateVersion', { path: { id: 'letter', version: '99' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'restoreTemplateVersion',
        async () => {
          await call('restoreTemplateVersion', { path: { id: 'letter', version: '1' }, headers: pro.headers, expect: 200 });
          await call('restoreTemplateVersion', { path: { id: 'letter', version: '99' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'validateTemplateData',
        async () => {
          await call('validateTemplateData', { path: { id: 'letter' }, json: { data: { name: 'Ada' } }, headers: pro.headers, expect: 200 });
          await call('validateTemplateData', { path: { id: 'nothing' }, json: { data: {} }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'validate',
        async () => {
          await call('validate', { json: { latex: HELLO }, headers: pro.headers, expect: 200 });
          await call('validate', { raw: { body: '{"latex":', type: 'application/json' }, headers: pro.headers, expect: 400 });
          await call('validate', { raw: { body: 'latex', type: 'application/xml' }, headers: pro.headers, expect: 415 });
        },
      ],
      [
        'checkPdf',
        async () => {
          // A one-page PDF without a cross-reference table: qpdf reconstructs it (exit 3, warnings).
          const pdf = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 100 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');
          await call('checkPdf', { json: { pdf_base64: pdf.toString('base64') }, headers: pro.headers, expect: 200 });
          await call('checkPdf', { json: { pdf_base64: Buffer.from('not a pdf').toString('base64') }, headers: pro.headers, expect: 422 });
          await call('checkPdf', { raw: { body: '{"pdf_base64":', type: 'application/json' }, headers: pro.headers, expect: 400 });
        },
      ],
      [
        'renderTemplate',
        async () => {
          await call('renderTemplate', { path: { id: 'letter' }, json: { data: { name: 'Ada' } }, headers: pro.headers, expect: 200 });
          await call('renderTemplate', { path: { id: 'letter' }, json: { data: 'Ada' }, headers: pro.headers, expect: 422 });
          await call('renderTemplate', { path: { id: 'letter' }, json: { data: { name: 'Ada' }, texlive: '2026' }, headers: pro.headers, expect: 200 });
          await call('renderTemplate', { path: { id: 'letter' }, json: { data: { name: 'Ada' }, texlive: '1999' }, headers: pro.headers, expect: 422 });
          await call('renderTemplate', { path: { id: 'nothing' }, json: { data: {} }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'renderTemplateBatch',
        async () => {
          const accepted = (await call('renderTemplateBatch', { path: { id: 'letter' }, json: { items: [{ name: 'Ada' }] }, headers: pro.headers, expect: 202 })).json();
          const job = await waitForJob(pro, accepted.job_id as string);
          assert.equal(job.status, 'succeeded', JSON.stringify(job));
          await call('renderTemplateBatch', { path: { id: 'letter' }, json: { items: [] }, headers: pro.headers, expect: 422 });
          await call('renderTemplateBatch', { path: { id: 'letter' }, json: { items: [{ name: 'Ada' }], texlive: '1999' }, headers: pro.headers, expect: 422 });
        },
      ],
      [
        'deleteTemplateV2',
        async () => {
          await call('deleteTemplateV2', { path: { id: 'letter' }, headers: pro.headers, expect: 204 });
          await call('deleteTemplateV2', { path: { id: 'letter' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'deleteTemplate',
        async () => {
          await call('deleteTemplate', { path: { id: 'raw' }, headers: pro.headers, expect: 204 });
          await call('deleteTemplate', { path: { id: 'raw' }, headers: free.headers, expect: 403 });
        },
      ],
      [
        'listPublicTemplates',
        async () => {
          const list = (await call('listPublicTemplates', { expect: 200 })).json();
          state.slug = (list.templates as Array<{ slug: string }>)[0]!.slug;
        },
      ],
      [
        'getPublicTemplate',
        async () => {
          state.sample = (await call('getPublicTemplate', { path: { slug: state.slug }, expect: 200 })).json().sample_data;
          await call('getPublicTemplate', { path: { slug: 'no-such-template' }, expect: 404 });
        },
      ],
      [
        'renderPublicTemplate',
        async () => {
          await call('renderPublicTemplate', { path: { slug: state.slug }, json: { data: state.sample }, expect: 200 });
          await call('renderPublicTemplate', { path: { slug: state.slug }, json: { data: state.sample, color: 'ultraviolet' }, expect: 422 });
          await call('renderPublicTemplate', { path: { slug: state.slug }, json: { data: state.sample, texlive: '1999' }, expect: 422 });
          await call('renderPublicTemplate', { path: { slug: state.slug }, raw: { body: 'data', type: 'application/xml' }, expect: 415 });
        },
      ],
      [
        'getPublicTemplatePreview',
        async () => {
          const png = await call('getPublicTemplatePreview', { path: { slug: state.slug }, expect: 200 });
          const again = await call('getPublicTemplatePreview', { path: { slug: state.slug }, headers: { 'if-none-match': png.headers.get('etag')! }, expect: 304 });
          assert.equal(again.headers.get('content-type'), null, 'a 304 sends no Content-Type');
          await call('getPublicTemplatePreview', { path: { slug: 'no-such-template' }, expect: 404 });
        },
      ],
      [
        'getWebhookSecret',
        async () => {
          await call('getWebhookSecret', { headers: pro.headers, expect: 200 });
          await call('getWebhookSecret', { expect: 401 });
        },
      ],
      ['rotateWebhookSecret', async () => void (await call('rotateWebhookSecret', { headers: pro.headers, expect: 200 }))],
      [
        'createSigningIdentity',
        async () => {
          const ca = makeCa();
          const file = p12(makeLeaf(ca, 'Contract Signer'), [ca], 'pw');
          await call('createSigningIdentity', { json: { name: 'contract', p12_base64: file, password: 'pw' }, headers: pro.headers, expect: 201 });
          await call('createSigningIdentity', { json: { name: 'contract', p12_base64: file, password: 'pw' }, headers: pro.headers, expect: 409 });
          await call('createSigningIdentity', { json: { name: 'wrong', p12_base64: file, password: 'nope' }, headers: pro.headers, expect: 422 });
          await call('createSigningIdentity', { json: { name: 'free', p12_base64: file, password: 'pw' }, headers: free.headers, expect: 403 });
        },
      ],
      [
        'listSigningIdentities',
        async () => {
          await call('listSigningIdentities', { headers: pro.headers, expect: 200 });
          await call('listSigningIdentities', { expect: 401 });
        },
      ],
      [
        'deleteSigningIdentity',
        async () => {
          await call('deleteSigningIdentity', { path: { name: 'contract' }, headers: pro.headers, expect: 204 });
          await call('deleteSigningIdentity', { path: { name: 'contract' }, headers: pro.headers, expect: 404 });
        },
      ],
      [
        'mcp',
        async () => {
          await call('mcp', { json: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, expect: 200 });
          await call('mcp', { json: { jsonrpc: '2.0', method: 'notifications/initialized' }, expect: 202 });
          await call('mcp', { json: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { origin: 'https://evil.example' }, expect: 403 });
        },
      ],
      ['openMcpStream', async () => void (await call('openMcpStream', { expect: 405 }))],
    ];

    const driven = drivers.map(([id]) => id);
    const missing = [...ops.keys()].filter((id) => !driven.includes(id));
    assert.deepEqual(missing, [], 'operations without a driver case: add one here');
    assert.deepEqual(driven.filter((id) => !ops.has(id)), [], 'driver cases for operations the document no longer has');
    for (const [, drive] of drivers) await drive();

    const responses = [...covered.values()].reduce((n, statuses) => n + statuses.size, 0);
    console.log(`contract: ${covered.size} of ${ops.size} operations covered (${responses} distinct operation/status pairs), ${violations.length} violations`);
    assert.deepEqual(violations, []);
    assert.equal(covered.size, ops.size);
  });
});

describe('the response checker', () => {
  let t: TestApp;
  let ops: Map<string, OperationRef>;
  before(async () => {
    t = await testApp();
    ops = operationsOf((await t.app.inject({ url: '/openapi.json' })).json() as OpenApiDoc);
  });
  after(() => t.close());

  test('flags what the issue found: a JSON 304, a PDF declared as JSON, an undeclared status, code or field', () => {
    const checker = new ResponseChecker();
    const json = (body: unknown) => [new Headers({ 'content-type': 'application/json' }), Buffer.from(JSON.stringify(body))] as const;
    const preview = ops.get('getPublicTemplatePreview')!;
    assert.match(checker.check(preview, 304, ...json(null)).join(), /declares no body/);
    assert.match(checker.check(preview, 404, new Headers({ 'content-type': 'image/png' }), Buffer.from('{}')).join(), /content type image\/png not declared/);
    const pdf = ops.get('downloadPdf')!;
    assert.deepEqual(checker.check(pdf, 200, new Headers({ 'content-type': 'application/pdf' }), Buffer.from('%PDF-1.7')), []);
    assert.match(checker.check(pdf, 200, ...json({})).join(), /content type application\/json not declared/);
    assert.match(checker.check(ops.get('getHealth')!, 418, ...json({})).join(), /status not declared/);
    const compile = ops.get('compile')!;
    assert.deepEqual(checker.check(compile, 415, ...json({ error: 'unsupported_media_type', message: 'm' })), []);
    assert.match(checker.check(compile, 415, ...json({ error: 'invalid_json', message: 'm' })).join(), /equal to one of the allowed values|must match/);
    const usage = ops.get('getUsage')!;
    assert.match(checker.check(usage, 401, ...json({ error: 'missing_api_key' })).join(), /message/);
    const secret = ops.get('getWebhookSecret')!;
    assert.match(checker.check(secret, 200, ...json({ secret: 'whsec_x', extra: 1 })).join(), /additional properties/);
  });
});
