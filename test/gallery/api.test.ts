// The public gallery over HTTP: list, detail, 404, render validation (no quota), the compile
// path for anonymous and keyed callers (with a stored logo), and cached preview images.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GALLERY_CATEGORIES } from '../../src/gallery/catalog.js';
import { createAccount, testApp, type TestApp } from '../helpers.js';

// A 1×1 PNG.
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('public gallery API', () => {
  let t: TestApp;
  const render = (slug: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, payload: payload as object, headers });
  const sample = (slug: string) => structuredClone(t.services.gallery.find(slug).sample_data);

  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  test('lists every category with at least two designs per document and three colors each', async () => {
    const res = await t.app.inject({ url: '/api/v1/public_templates' });
    assert.equal(res.statusCode, 200);
    const { templates } = res.json() as { templates: Array<Record<string, unknown>> };
    assert.ok(templates.length >= 20);
    for (const category of GALLERY_CATEGORIES) {
      const members = templates.filter((e) => e.category === category);
      assert.ok(members.length >= 2, `${category} has two designs`);
      const documents = new Set(members.map((e) => e.document));
      for (const doc of documents) {
        assert.ok(members.filter((e) => e.document === doc).length >= 2, `${doc} has two designs`);
      }
    }
    for (const e of templates) {
      assert.deepEqual(Object.keys(e).sort(), [
        'category', 'colors', 'compiler', 'default_color', 'design', 'document', 'page_url', 'preview_url',
        'render_url', 'slug', 'summary', 'title',
      ]);
      assert.ok((e.colors as string[]).length >= 3);
      assert.equal((e.colors as string[])[0], e.default_color);
      assert.equal(e.page_url, `http://quire.test/gallery/${e.slug as string}`);
      assert.equal(e.preview_url, `http://quire.test/api/v1/public_templates/${e.slug as string}/preview.png`);
      assert.equal(e.render_url, `http://quire.test/api/v1/public_templates/${e.slug as string}/render`);
    }
  });

  test('detail adds schema, sample_data, instructions and the Liquid source', async () => {
    const res = await t.app.inject({ url: '/api/v1/public_templates/invoice-modern' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.slug, 'invoice-modern');
    assert.equal(body.document, 'invoice');
    assert.equal(body.schema.type, 'object');
    assert.ok(body.schema.required.includes('items'));
    assert.equal(body.sample_data.invoice_number, 'INV-2026-0142');
    assert.match(body.instructions, /tax_rate/);
    assert.match(body.latex_with_placeholders, /\{\{ item\.description \}\}/);
    const classic = (await t.app.inject({ url: '/api/v1/public_templates/invoice-classic' })).json();
    assert.deepEqual(classic.schema, body.schema, 'designs of one document share the schema');
    assert.deepEqual(classic.sample_data, body.sample_data);
  });

  test('an unknown slug is a 404 not_found on detail, render and preview', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/public_templates/no-such-thing'],
      ['POST', '/api/v1/public_templates/no-such-thing/render'],
      ['GET', '/api/v1/public_templates/no-such-thing/preview.png'],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: { data: {} } } : {}) });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error, 'not_found');
    }
  });

  test('bad requests are refused before compiling and cost no quota', async () => {
    let res = await render('invoice-classic', {});
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'invalid_data');
    assert.deepEqual(res.json().missing_fields, ['data']);
    for (const data of [[], 'text', 42, null]) {
      res = await render('invoice-classic', { data });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'invalid_data');
    }
    res = await render('invoice-classic', { data: sample('invoice-classic'), color: 'chartreuse' });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'invalid_color');
    assert.deepEqual(res.json().colors, ['navy', 'burgundy', 'forest']);
    res = await render('invoice-classic', { data: sample('invoice-classic'), color: 7 });
    assert.equal(res.json().error, 'invalid_color');

    const missing = sample('invoice-classic');
    delete missing.currency;
    delete (missing.buyer as Record<string, unknown>).name;
    (missing.items as Array<Record<string, unknown>>)[1]!.quantity = 'six';
    missing.issue_date = '2026-13-45';
    res = await render('invoice-classic', { data: missing });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.error, 'schema_validation_failed');
    assert.deepEqual(body.missing_fields.sort(), ['buyer.name', 'currency']);
    assert.deepEqual(body.type_errors, [
      { field: 'issue_date', expected: 'date (YYYY-MM-DD)', got: 'string of 10 characters' },
      { field: 'items[1].quantity', expected: 'number', got: 'string' },
    ]);

    const blanks = { ...sample('invoice-classic'), due_date: '', notes: null, discount: null };
    res = await render('invoice-classic', { data: blanks });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().remaining_today, 2, 'only the successful render used the anonymous quota');
  });

  test('an anonymous render follows the compile path: a PDF behind a signed link', async () => {
    const res = await render('certificate-modern', { data: sample('certificate-modern'), color: 'plum' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.anonymous, true);
    assert.equal(body.pages, 1);
    assert.equal(typeof body.render_time_ms, 'number');
    assert.deepEqual(body.template, { slug: 'certificate-modern', document: 'certificate', design: 'modern', color: 'plum' });
    const pdf = await t.app.inject({ url: new URL(body.pdf_url).pathname + new URL(body.pdf_url).search });
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
  });

  test('an anonymous logo is refused by the compile path; a paid key renders its stored logo', async () => {
    const data = { ...sample('invoice-modern'), logo: 'logo.png' };
    const anonymous = await render('invoice-modern', { data });
    assert.equal(anonymous.statusCode, 422);
    assert.equal(anonymous.json().error, 'assets_not_available_anonymously');

    const account = await createAccount(t.services, 'pro');
    const upload = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: account.headers,
      payload: { name: 'logo.png', content_base64: PNG_BASE64 },
    });
    assert.equal(upload.statusCode, 201, upload.body);
    const res = await render('invoice-modern', { data }, account.headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().stored_assets_used, ['logo.png']);
    assert.equal(res.json().anonymous, undefined);

    const bad = await render('invoice-modern', { data }, { authorization: 'Bearer nope' });
    assert.equal(bad.statusCode, 401);
  });

  test('preview images are made once and served with ETag and Cache-Control', async () => {
    const first = await t.app.inject({ url: '/api/v1/public_templates/receipt-classic/preview.png' });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['content-type'], 'image/png');
    assert.equal(first.rawPayload.subarray(1, 4).toString(), 'PNG');
    assert.match(String(first.headers.etag), /^"[0-9a-f]{20}"$/);
    assert.match(String(first.headers['cache-control']), /max-age=\d+/);
    const again = await t.app.inject({
      url: '/api/v1/public_templates/receipt-classic/preview.png',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    // RFC 9110 §15.4.5: a 304 has no body and changes nothing a cache stores (it once sent
    // Content-Type: application/json and Content-Length: 4, the JSON "null").
    assert.equal(again.rawPayload.length, 0);
    assert.equal(again.headers['content-type'], undefined);
    assert.equal(again.headers['content-length'], undefined);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(again.headers['cache-control'], first.headers['cache-control']);
  });

  test('an unknown template page is an HTML 404 with the slug escaped', async () => {
    const res = await t.app.inject({ url: '/gallery/%3Cscript%3Ealert(1)%3C%2Fscript%3E' });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(res.body, /<script>alert/);
  });

  test('pages are HTML with every value escaped', async () => {
    const index = await t.app.inject({ url: '/gallery' });
    assert.equal(index.statusCode, 200);
    assert.match(String(index.headers['content-type']), /^text\/html/);
    for (const category of ['Invoices', 'Purchase orders', 'Cover letters']) assert.match(index.body, new RegExp(category));
    const page = await t.app.inject({ url: '/gallery/invoice-classic' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Hartwell &amp; Sons/);
    assert.doesNotMatch(page.body, /Hartwell & Sons/);
    assert.match(page.body, /<code>items\[\]\.quantity<\/code>/);
  });
});
