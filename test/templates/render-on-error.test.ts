// `on_error` (extension of SPEC 1.5.0, docs/projects-and-warnings.md) on every render door, with
// real TeX: the V2 render, the public gallery render and the batch render over HTTP, and the MCP
// `render` and `render_public_template` tools. A rendered document with a recoverable error is
// 200 with its PDF and `errors` with on_error "continue", charged; SPEC's 422 without the field
// or with "stop"; a bad value is validation_failed before the render limit is charged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadCatalog } from '../../src/gallery/catalog.js';
import { GalleryService } from '../../src/gallery/service.js';
import type { App } from '../../src/http/types.js';
import { waitForJob } from '../jobs/receiver.js';
import { callTool } from '../mcp/call.js';
import { createAccount, testApp, testServices, type TestAccount, type TestApp, type TestServices } from '../helpers.js';

/** The error is in the template itself, on line 4 of the rendered main.tex. */
const IN_TEMPLATE = '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\nText \\undefinedmacro after it.\n\\end{document}\n';
/** The error arrives only when Liquid renders: a value the author let through unescaped with `raw`. */
const FROM_DATA = '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\n{{ note | raw }}\n\\end{document}\n';
const NOTE = 'See \\nosuchmacrohere now.';
const UNDEFINED = { message: 'Undefined control sequence.', file: 'main.tex', line: 4 };

/** The first pdflatex gallery template with an undefined command right after \begin{document}. */
function brokenGalleryTemplate() {
  const t = loadCatalog().find((c) => c.compiler === 'pdflatex');
  assert.ok(t, 'the gallery has a pdflatex template');
  const source = t.latex_with_placeholders.replace('\\begin{document}', '\\begin{document}\\undefinedmacro{}');
  assert.notEqual(source, t.latex_with_placeholders);
  return { ...t, slug: 'broken-on-purpose', latex_with_placeholders: source };
}

type Body = Record<string, unknown> & { errors?: Array<Record<string, unknown>>; error?: string; fields?: Array<{ field: string }> };

describe('on_error on every render door', () => {
  let services: TestServices;
  let app: App;
  let pro: TestAccount;
  let ids: { inTemplate: number; fromData: number };
  const gallery = brokenGalleryTemplate();

  before(async () => {
    services = await testServices();
    // A gallery of one template whose rendered source has a recoverable error (the repository's have none).
    services.gallery = new GalleryService({ templates: [gallery], baseUrl: services.config.baseUrl, compiler: services.compile, texQueue: services.texQueue, blobs: services.blobs });
    app = await buildApp(services);
    await app.ready();
    pro = await createAccount(services, 'pro');
    const save = async (name: string, source: string) => {
      const res = await app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name, latex_with_placeholders: source } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().template.id as number;
    };
    ids = { inTemplate: await save('in-template', IN_TEMPLATE), fromData: await save('from-data', FROM_DATA) };
  });
  after(async () => {
    await app.close();
    await services.cleanup();
  });

  const used = async () => (await app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;
  const render = (id: number, payload: object) => app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload });
  const publicRender = (payload: object) => app.inject({ method: 'POST', url: `/api/v1/public_templates/${gallery.slug}/render`, headers: pro.headers, payload });

  const cases = [
    ['an error in the template', () => ids.inTemplate, { name: 'Ada' }, '\\undefinedmacro'],
    ['an error a raw value brings in', () => ids.fromData, { name: 'Ada', note: NOTE }, '\\nosuchmacrohere'],
  ] as const;

  for (const [label, id, data, symbol] of cases) {
    it(`V2 render, ${label}: "continue" is 200 with the PDF and errors, charged`, async () => {
      const before = await used();
      const res = await render(id(), { data, on_error: 'continue' });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.pages, 1);
      assert.deepEqual(body.errors, [UNDEFINED]);
      assert.deepEqual(body.warnings, []);
      assert.equal(body.template.id, id());
      const pdf = await app.inject({ url: new URL(body.pdf_url).pathname + new URL(body.pdf_url).search });
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
      assert.equal(await used(), before + 1);
    });

    it(`V2 render, ${label}: absent or "stop" is SPEC's 422 with a diagnosis, not charged`, async () => {
      const before = await used();
      for (const extra of [{}, { on_error: 'stop' }]) {
        const res = await render(id(), { data, ...extra });
        assert.equal(res.statusCode, 422, res.body);
        const body = res.json();
        assert.equal(body.error, 'compilation_failed');
        assert.equal(body.diagnosis.error_class, 'undefined_command');
        assert.equal(body.diagnosis.symbol, symbol);
      }
      assert.equal(await used(), before);
    });
  }

  it('a document that renders cleanly: errors is [] with "continue", absent without', async () => {
    const clean = await render(ids.fromData, { data: { name: 'Ada', note: 'All fine.' }, on_error: 'continue' });
    assert.equal(clean.statusCode, 200, clean.body);
    assert.deepEqual(clean.json().errors, []);
    const plain = await render(ids.fromData, { data: { name: 'Ada', note: 'All fine.' } });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.json().errors, undefined);
  });

  it('public render: "continue" is 200 with the PDF and errors; without it SPEC\'s 422', async () => {
    const before = await used();
    const ok = await publicRender({ data: gallery.sample_data, on_error: 'continue' });
    assert.equal(ok.statusCode, 200, ok.body);
    const body = ok.json();
    assert.ok(body.pages >= 1);
    assert.equal(body.errors.length, 1, ok.body);
    assert.equal(body.errors[0].message, 'Undefined control sequence.');
    assert.equal(body.errors[0].file, 'main.tex');
    assert.equal(typeof body.errors[0].line, 'number');
    assert.equal(body.template.slug, gallery.slug);
    assert.equal(await used(), before + 1);
    const refused = await publicRender({ data: gallery.sample_data });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().error, 'compilation_failed');
    assert.equal(refused.json().diagnosis.symbol, '\\undefinedmacro');
    assert.equal(await used(), before + 1);
  });

  it('MCP render: "continue" returns the PDF with errors (named in the text too); without it a compile failure', async () => {
    const ok = await callTool(app, pro.headers, 'render', { id: ids.fromData, data: { name: 'Ada', note: NOTE }, on_error: 'continue' });
    assert.equal(ok.isError, undefined, JSON.stringify(ok.structuredContent));
    assert.deepEqual((ok.structuredContent as Body).errors, [UNDEFINED]);
    assert.match(ok.content[0]!.text!, /TeX went on past 1 error\(s\)[^\n]*\n- Undefined control sequence\. \(main\.tex:4\)/);
    const failed = await callTool(app, pro.headers, 'render', { id: ids.fromData, data: { name: 'Ada', note: NOTE } });
    assert.equal(failed.isError, true);
    assert.equal(failed.structuredContent.error, 'compilation_failed');
  });

  it('MCP render_public_template: "continue" returns the PDF with errors; without it a compile failure', async () => {
    const ok = await callTool(app, pro.headers, 'render_public_template', { slug: gallery.slug, data: gallery.sample_data, on_error: 'continue' });
    assert.equal(ok.isError, undefined, JSON.stringify(ok.structuredContent));
    assert.equal((ok.structuredContent as Body).errors?.[0]?.message, 'Undefined control sequence.');
    const failed = await callTool(app, pro.headers, 'render_public_template', { slug: gallery.slug, data: gallery.sample_data });
    assert.equal(failed.isError, true);
    assert.equal(failed.structuredContent.error, 'compilation_failed');
  });

  it('batch render: "continue" applies to every item; without it each item is SPEC\'s 422', async () => {
    const batch = async (extra: object) => {
      const res = await app.inject({ method: 'POST', url: `/api/v2/templates/${ids.inTemplate}/render_batch`, headers: pro.headers, payload: { items: [{ name: 'Ada' }, { name: 'Bob' }], ...extra } });
      assert.equal(res.statusCode, 202, res.body);
      const job = await waitForJob(async () => (await app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: pro.headers })).json(), undefined, 120_000);
      assert.equal(job.status, 'succeeded');
      return (job.result as { items: Array<{ status: number; result?: Body; error?: Body }> }).items;
    };
    const before = await used();
    const going = await batch({ on_error: 'continue' });
    assert.deepEqual(going.map((i) => i.status), [200, 200]);
    for (const item of going) assert.deepEqual(item.result?.errors, [UNDEFINED]);
    const stopping = await batch({});
    assert.deepEqual(stopping.map((i) => [i.status, i.error?.error]), [[422, 'compilation_failed'], [422, 'compilation_failed']]);
    assert.equal(await used(), before + 2);
  });
});

describe('a bad on_error on a render door', () => {
  let t: TestApp;
  let pro: TestAccount;
  let id: number;
  const slug = loadCatalog()[0]!.slug;
  const sample = loadCatalog()[0]!.sample_data;

  before(async () => {
    // One render a minute: a bad on_error that charged the render limit would refuse the good render after it.
    t = await testApp({ env: { QUIRE_RENDER_PER_MINUTE: '1' } });
    pro = await createAccount(t.services, 'pro');
    const res = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'letter', latex_with_placeholders: IN_TEMPLATE } });
    id = res.json().template.id;
  });
  after(() => t.close());

  const validationFailed = (body: Body) => {
    assert.equal(body.error, 'validation_failed', JSON.stringify(body));
    assert.deepEqual(body.fields?.map((f) => f.field), ['on_error']);
  };

  it('is 422 validation_failed on every door, charges nothing and leaves the render limit alone', async () => {
    for (const bad of ['nonstop', 'CONTINUE', true, null, ['continue']]) {
      const v2 = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { name: 'Ada' }, on_error: bad } });
      assert.equal(v2.statusCode, 422, v2.body);
      validationFailed(v2.json());
      const pub = await t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, headers: pro.headers, payload: { data: sample, on_error: bad } });
      assert.equal(pub.statusCode, 422, pub.body);
      validationFailed(pub.json());
      const batch = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render_batch`, headers: pro.headers, payload: { items: [{ name: 'Ada' }], on_error: bad } });
      assert.equal(batch.statusCode, 422, batch.body);
      validationFailed(batch.json());
      for (const [tool, args] of [['render', { id, data: { name: 'Ada' } }], ['render_public_template', { slug, data: sample }]] as const) {
        const result = await callTool(t.app, pro.headers, tool, { ...args, on_error: bad });
        assert.equal(result.isError, true, tool);
        validationFailed(result.structuredContent);
      }
    }
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage;
    assert.equal(usage.used_this_month, 0);
    // The canary: the one render this minute still goes through, so none of the above took it.
    const good = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { name: 'Ada' }, on_error: 'continue' } });
    assert.equal(good.statusCode, 200, good.body);
    assert.deepEqual(good.json().errors, [UNDEFINED]);
  });
});
