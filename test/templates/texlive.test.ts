// The TeX Live year of renders (issue 22), with real TeX in the real images: V1 and V2 templates
// store a year, a render runs with the request's year, else the template's, else the newest; a
// year not served (asked for, stored, or kept by a template the server no longer serves) is 422
// texlive_not_available and costs nothing; public renders, batch and async jobs carry the year
// in every body; the MCP render tools list and pass it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { texliveSettings } from '../../src/config.js';
import { installedImages } from '../../src/tex/image/store.js';
import { TEXLIVE_YEARS } from '../../src/tex/image/releases.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';
import { callTool } from '../mcp/call.js';

const ALL = '2026,2024,2022';
const installed = installedImages(texliveSettings({ QUIRE_TEXLIVE: ALL }).dir).map((image): string => image.year);
/** The oldest installed year: not the default wherever a second image is built. */
const OLDEST = installed[installed.length - 1]!;
const NEWEST = installed[0]!;
/** A year of the catalogue this machine has not built (2022 if every one is). */
const UNSERVED = TEXLIVE_YEARS.find((year) => !installed.includes(year)) ?? '2022';

const LETTER = '\\documentclass{article}\n\\begin{document}\nDear {{ name }}, you owe {{ amount | default: 0 }}.\n\\end{document}\n';
const BROKEN = '\\documentclass{article}\n\\begin{document}\nDear {{ name }}. \\undefinedmacro\n\\end{document}\n';
const INVOICE = 'invoice-classic';

describe('TeX Live years of renders', () => {
  let t: TestApp;
  let pro: TestAccount;
  before(async () => {
    t = await testApp({ env: { QUIRE_TEXLIVE: ALL } });
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers: Record<string, string> = pro.headers) =>
    t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const used = async (account: TestAccount) => (await inject('GET', '/api/v1/usage', undefined, account.headers)).json().usage.used_this_month as number;
  const job = (account: TestAccount, id: string) =>
    waitForJob(async () => (await inject('GET', `/api/v1/jobs/${id}`, undefined, account.headers)).json(), undefined, 120_000);

  test('a V2 template stores a year; get and list show it; a render uses it, the request\'s year wins, null clears it', async () => {
    const created = await inject('POST', '/api/v2/templates', { name: 'stored', latex_with_placeholders: LETTER, texlive: OLDEST });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().template.texlive, OLDEST);
    assert.equal((await inject('GET', '/api/v2/templates/stored')).json().template.texlive, OLDEST);
    assert.equal((await inject('GET', '/api/v1/templates/stored')).json().template.texlive, OLDEST);
    const row = (await inject('GET', '/api/v2/templates')).json().templates.find((r: { name: string }) => r.name === 'stored');
    assert.equal(row.texlive, OLDEST);

    const render = await inject('POST', '/api/v2/templates/stored/render', { data: { name: 'Ada' } });
    assert.equal(render.statusCode, 200, render.body.slice(0, 1000));
    assert.equal(render.json().texlive, OLDEST);
    const asked = await inject('POST', '/api/v2/templates/stored/render', { data: { name: 'Ada' }, texlive: NEWEST });
    assert.equal(asked.statusCode, 200, asked.body.slice(0, 1000));
    assert.equal(asked.json().texlive, NEWEST);

    const cleared = await inject('PATCH', '/api/v2/templates/stored', { texlive: null });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().template.texlive, null);
    assert.equal(cleared.json().template.version, 1, 'a year is a setting, not a new version');
    const fallback = await inject('POST', '/api/v2/templates/stored/render', { data: { name: 'Ada' } });
    assert.equal(fallback.json().texlive, NEWEST);
  });

  test('a V1 template stores a year too, kept when it is promoted; a template saved without one says null', async () => {
    const raw = await inject('POST', '/api/v1/templates', { name: 'raw', latex_content: '\\documentclass{article}\\begin{document}Hi\\end{document}', texlive: OLDEST });
    assert.equal(raw.statusCode, 201, raw.body);
    assert.equal(raw.json().template.texlive, OLDEST);
    const plain = await inject('POST', '/api/v1/templates', { name: 'plain', latex_content: '\\documentclass{article}\\begin{document}Hi\\end{document}' });
    assert.equal(plain.json().template.texlive, null);
    const updated = await inject('POST', '/api/v1/templates', { name: 'plain', texlive: NEWEST });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().template.texlive, NEWEST);
    const promoted = await inject('POST', '/api/v2/templates/raw/promote', { latex_with_placeholders: LETTER });
    assert.equal(promoted.statusCode, 200, promoted.body);
    assert.equal(promoted.json().template.texlive, OLDEST);
    const render = await inject('POST', '/api/v2/templates/raw/render', { data: { name: 'Grace' } });
    assert.equal(render.statusCode, 200, render.body.slice(0, 1000));
    assert.equal(render.json().texlive, OLDEST);
  });

  test('storing a year not served is 422 texlive_not_available, and nothing is stored', async () => {
    for (const texlive of ['1999', UNSERVED, 2026, '', 'latest'].filter((year) => !installed.includes(year as string))) {
      const v1 = await inject('POST', '/api/v1/templates', { name: 'never', latex_content: '\\documentclass{article}\\begin{document}Hi\\end{document}', texlive });
      assert.equal(v1.statusCode, 422, String(texlive));
      assert.deepEqual({ error: v1.json().error, texlive: v1.json().texlive, available: v1.json().available }, { error: 'texlive_not_available', texlive, available: installed });
      const v2 = await inject('POST', '/api/v2/templates', { name: 'never', latex_with_placeholders: LETTER, texlive });
      assert.equal(v2.json().error, 'texlive_not_available', String(texlive));
    }
    assert.equal((await inject('GET', '/api/v1/templates/never')).statusCode, 404);
    await inject('POST', '/api/v2/templates', { name: 'kept', latex_with_placeholders: LETTER, texlive: NEWEST });
    const patch = await inject('PATCH', '/api/v2/templates/kept', { texlive: '1999', description: 'changed' });
    assert.equal(patch.json().error, 'texlive_not_available');
    const kept = (await inject('GET', '/api/v2/templates/kept')).json().template;
    assert.deepEqual([kept.texlive, kept.description], [NEWEST, '']);
  });

  test('a render asking for a year not served: 422 with the served ones, nothing charged', async () => {
    const account = await createAccount(t.services, 'pro');
    await inject('POST', '/api/v2/templates', { name: 'letter', latex_with_placeholders: LETTER }, account.headers);
    for (const texlive of [UNSERVED, '2025', 2026]) {
      if (installed.includes(texlive as string)) continue;
      const res = await inject('POST', '/api/v2/templates/letter/render', { data: { name: 'Ada' }, texlive }, account.headers);
      assert.equal(res.statusCode, 422, String(texlive));
      assert.deepEqual({ error: res.json().error, texlive: res.json().texlive, available: res.json().available }, { error: 'texlive_not_available', texlive, available: installed });
    }
    assert.equal(await used(account), 0);
  });

  test('every 422 of a render says its year: bad data, and a TeX failure', async () => {
    await inject('POST', '/api/v2/templates', { name: 'broken', latex_with_placeholders: BROKEN, texlive: OLDEST });
    const data = await inject('POST', '/api/v2/templates/stored/render', { data: { amount: 3 }, texlive: NEWEST });
    assert.equal(data.statusCode, 422, data.body);
    assert.deepEqual([data.json().error, data.json().texlive], ['schema_validation_failed', NEWEST]);
    const shape = await inject('POST', '/api/v2/templates/broken/render', { data: 'Ada' });
    assert.deepEqual([shape.json().error, shape.json().texlive], ['invalid_data_shape', OLDEST]);
    const tex = await inject('POST', '/api/v2/templates/broken/render', { data: { name: 'Ada' } });
    assert.equal(tex.statusCode, 422, tex.body.slice(0, 500));
    assert.deepEqual([tex.json().error, tex.json().texlive], ['compilation_failed', OLDEST]);
  });

  test('public gallery renders take the year as compile does; a year not served costs a keyless caller nothing', async () => {
    const sample = structuredClone(t.services.gallery.find(INVOICE).sample_data);
    const render = (payload: object) => t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${INVOICE}/render`, payload });
    const refused = await render({ data: sample, texlive: '2025' });
    assert.equal(refused.statusCode, 422);
    assert.deepEqual({ error: refused.json().error, texlive: refused.json().texlive, available: refused.json().available }, { error: 'texlive_not_available', texlive: '2025', available: installed });
    const bad = await render({ data: {}, texlive: OLDEST });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual([bad.json().error, bad.json().texlive], ['schema_validation_failed', OLDEST]);
    const ok = await render({ data: sample, texlive: OLDEST });
    assert.equal(ok.statusCode, 200, ok.body.slice(0, 1000));
    assert.equal(ok.json().texlive, OLDEST);
    // The refusals cost the keyless address nothing: this was its first compile of the day.
    assert.equal(ok.json().usage.used_today, 1, JSON.stringify(ok.json().usage));
    const plain = await render({ data: sample });
    assert.equal(plain.json().texlive, NEWEST);
  });

  test('batch: the year is fixed for the whole job (request, else template), every item says it; a year not served is refused at once', async () => {
    const account = await createAccount(t.services, 'pro');
    await inject('POST', '/api/v2/templates', { name: 'dunning', latex_with_placeholders: LETTER, texlive: OLDEST }, account.headers);
    const accepted = await inject('POST', '/api/v2/templates/dunning/render_batch', { items: [{ name: 'Ada' }, { amount: 7 }] }, account.headers);
    assert.equal(accepted.statusCode, 202, accepted.body);
    const done = await job(account, accepted.json().job_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done).slice(0, 1000));
    const result = done.result as { texlive: string; items: Array<{ status: number; result?: { texlive: string }; error?: { error: string; texlive: string } }> };
    assert.equal(result.texlive, OLDEST);
    assert.equal(result.items[0]!.result!.texlive, OLDEST);
    assert.deepEqual([result.items[1]!.error!.error, result.items[1]!.error!.texlive], ['schema_validation_failed', OLDEST]);

    const asked = await inject('POST', '/api/v2/templates/dunning/render_batch', { items: [{ name: 'Ada' }], texlive: NEWEST }, account.headers);
    const askedJob = await job(account, asked.json().job_id);
    assert.equal((askedJob.result as { texlive: string }).texlive, NEWEST);
    assert.equal((askedJob.result as { items: Array<{ result: { texlive: string } }> }).items[0]!.result.texlive, NEWEST);

    const before = await used(account);
    const refused = await inject('POST', '/api/v2/templates/dunning/render_batch', { items: [{ name: 'Ada' }], texlive: '1999' }, account.headers);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.deepEqual([refused.json().error, refused.json().available], ['texlive_not_available', installed]);
    assert.equal(await used(account), before);
  });

  test('async compile, render and public render: the job result or error says the year; a year not served is refused before a job exists', async () => {
    const account = await createAccount(t.services, 'pro');
    await inject('POST', '/api/v2/templates', { name: 'letter', latex_with_placeholders: LETTER, texlive: OLDEST }, account.headers);
    await inject('POST', '/api/v2/templates', { name: 'broken', latex_with_placeholders: BROKEN }, account.headers);
    const sample = structuredClone(t.services.gallery.find(INVOICE).sample_data);
    const started = [
      [await inject('POST', '/api/v1/compile', { latex: '\\documentclass{article}\\begin{document}Hi\\end{document}', texlive: OLDEST, async: true }, account.headers), OLDEST, 'result'],
      [await inject('POST', '/api/v2/templates/letter/render', { data: { name: 'Ada' }, async: true }, account.headers), OLDEST, 'result'],
      [await inject('POST', `/api/v1/public_templates/${INVOICE}/render`, { data: sample, texlive: OLDEST, async: true }, account.headers), OLDEST, 'result'],
      [await inject('POST', '/api/v2/templates/broken/render', { data: { name: 'Ada' }, async: true }, account.headers), NEWEST, 'error'],
    ] as const;
    for (const [res, year, field] of started) {
      assert.equal(res.statusCode, 202, res.body);
      const done = await job(account, res.json().job_id);
      const body = done[field] as { texlive: string; error?: string };
      assert.equal(body.texlive, year, JSON.stringify(done).slice(0, 1000));
      if (field === 'error') assert.equal(body.error, 'compilation_failed');
    }
    for (const [url, payload] of [
      ['/api/v1/compile', { latex: '\\documentclass{article}\\begin{document}Hi\\end{document}' }],
      ['/api/v2/templates/letter/render', { data: { name: 'Ada' } }],
      [`/api/v1/public_templates/${INVOICE}/render`, { data: sample }],
    ] as const) {
      const res = await inject('POST', url, { ...payload, texlive: '1999', async: true }, account.headers);
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      assert.equal(res.json().error, 'texlive_not_available');
    }
  });

  test('MCP: compile, render, render_public_template and save_template list texlive with the years; render and save use it', async () => {
    const list = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...pro.headers },
    });
    const tools = list.json().result.tools as Array<{ name: string; inputSchema: { properties: Record<string, { enum?: unknown[] }> } }>;
    for (const name of ['compile', 'render', 'render_public_template', 'save_template']) {
      const field = tools.find((tool) => tool.name === name)!.inputSchema.properties.texlive;
      assert.ok(field, `${name} lists texlive`);
      assert.deepEqual(field.enum!.filter((year) => year !== null), [...TEXLIVE_YEARS], name);
    }

    const saved = await callTool(t.app, pro.headers, 'save_template', { name: 'mcp-letter', latex_content: LETTER, placeholder_engine: 'liquid', texlive: OLDEST });
    assert.equal(saved.isError, undefined, JSON.stringify(saved.structuredContent));
    assert.equal((saved.structuredContent.template as { texlive: string }).texlive, OLDEST);
    const stored = await callTool(t.app, pro.headers, 'render', { id: 'mcp-letter', data: { name: 'Ada' } });
    assert.equal(stored.isError, undefined, JSON.stringify(stored.structuredContent).slice(0, 1000));
    assert.equal(stored.structuredContent.texlive, OLDEST);
    const asked = await callTool(t.app, pro.headers, 'render', { id: 'mcp-letter', data: { name: 'Ada' }, texlive: NEWEST });
    assert.equal(asked.structuredContent.texlive, NEWEST);
    const refused = await callTool(t.app, pro.headers, 'render', { id: 'mcp-letter', data: { name: 'Ada' }, texlive: '1999' });
    assert.equal(refused.isError, true);
    assert.deepEqual([refused.structuredContent.error, refused.structuredContent.available], ['texlive_not_available', installed]);
    const sample = structuredClone(t.services.gallery.find(INVOICE).sample_data);
    const pub = await callTool(t.app, pro.headers, 'render_public_template', { slug: INVOICE, data: sample, texlive: OLDEST });
    assert.equal(pub.isError, undefined, JSON.stringify(pub.structuredContent).slice(0, 1000));
    assert.equal(pub.structuredContent.texlive, OLDEST);
  });
});

describe('a template whose stored year the server no longer serves', () => {
  let t: TestApp;
  before(async () => {
    // This server serves only the newest year: a template saved when it also served another keeps that year.
    t = await testApp({ env: { QUIRE_TEXLIVE: NEWEST } });
  });
  after(() => t.close());

  test('render and batch are 422 texlive_not_available naming the template\'s year, nothing charged; asking for a served year renders', async () => {
    const account = await createAccount(t.services, 'pro');
    const stale = TEXLIVE_YEARS.find((year) => year !== NEWEST)!;
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: account.headers, payload: { name: 'old', latex_with_placeholders: LETTER } });
    // What the row holds after QUIRE_TEXLIVE dropped the year it was saved with.
    await t.services.db.kysely.updateTable('templates').set({ texlive: stale }).where('id', '=', created.json().template.id).execute();
    assert.equal((await t.app.inject({ url: '/api/v2/templates/old', headers: account.headers })).json().template.texlive, stale);

    const render = await t.app.inject({ method: 'POST', url: '/api/v2/templates/old/render', headers: account.headers, payload: { data: { name: 'Ada' } } });
    assert.equal(render.statusCode, 422, render.body);
    assert.deepEqual({ error: render.json().error, texlive: render.json().texlive, available: render.json().available }, { error: 'texlive_not_available', texlive: stale, available: [NEWEST] });
    assert.match(render.json().message, new RegExp(`template renders with TeX Live ${stale}`));
    const batch = await t.app.inject({ method: 'POST', url: '/api/v2/templates/old/render_batch', headers: account.headers, payload: { items: [{ name: 'Ada' }] } });
    assert.equal(batch.statusCode, 422, batch.body);
    assert.equal(batch.json().error, 'texlive_not_available');
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage;
    assert.equal(usage.used_this_month, 0);

    const asked = await t.app.inject({ method: 'POST', url: '/api/v2/templates/old/render', headers: account.headers, payload: { data: { name: 'Ada' }, texlive: NEWEST } });
    assert.equal(asked.statusCode, 200, asked.body.slice(0, 1000));
    assert.equal(asked.json().texlive, NEWEST);
  });
});
