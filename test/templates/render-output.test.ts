// The `output` object on V2 render, public gallery render and render_batch (issue 23), with real
// TeX and poppler: metadata read back with pdfinfo, page images, an item's output over the
// batch's, and a malformed option refused with its field path before anything is charged.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';

const INVOICE = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\begin{document}
\textbf{Invoice {{ number }}} \hfill {{ date }}

Bill to: {{ buyer }}

\begin{tabular}{lr}
{% for line in lines %}{{ line.description }} & {{ line.amount }}\\
{% endfor %}
\end{tabular}

Total due: {{ total }} EUR
\end{document}
`;

/** The first tag of `xml` that does not close what it should (elements only), or null. */
function unbalancedTag(xml: string): string | null {
  const open: string[] = [];
  for (const [tag, slash, name, self] of xml.matchAll(/<(\/?)([A-Za-z][\w:.-]*)(?:\s[^<>]*?)?(\/?)>/g)) {
    if (self) continue;
    if (!slash) open.push(name!);
    else if (open.pop() !== name) return tag;
  }
  return open.length > 0 ? `<${open.pop()}> left open` : null;
}

/** The Factur-X (minimum profile) XML of an invoice, made from the same data as the PDF. */
function facturX(data: { number: string; date: string; buyer: string; total: string }): string {
  const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">',
    '  <rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:factur-x.eu:1p0:minimum</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>',
    `  <rsm:ExchangedDocument><ram:ID>${esc(data.number)}</ram:ID><ram:TypeCode>380</ram:TypeCode><ram:IssueDateTime><udt:DateTimeString format="102">${data.date.replaceAll('-', '')}</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>`,
    `  <rsm:SupplyChainTradeTransaction><ram:ApplicableHeaderTradeAgreement><ram:BuyerTradeParty><ram:Name>${esc(data.buyer)}</ram:Name></ram:BuyerTradeParty></ram:ApplicableHeaderTradeAgreement>`,
    `  <ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode><ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:DuePayableAmount>${data.total}</ram:DuePayableAmount></ram:SpecifiedTradeSettlementHeaderMonetarySummation></ram:ApplicableHeaderTradeSettlement></rsm:SupplyChainTradeTransaction>`,
    '</rsm:CrossIndustryInvoice>',
    '',
  ].join('\n');
}

const LETTER = '\\documentclass{article}\\begin{document}Dear {{ name }}, you owe {{ amount }}.\\end{document}';

/** The objects of a PDF as qpdf's JSON has them (`obj:N 0 R` → value). */
function pdfObjects(file: string): Record<string, { value?: Record<string, unknown> }> {
  const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file]).toString('utf8')) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>] };
  return json.qpdf[1];
}

type PageImage = { page: number; url: string; width: number; height: number };

describe('render with output options', () => {
  let t: TestApp;
  let pro: TestAccount;
  let templateId: number;
  let dir: string;

  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
    dir = mkdtempSync(join(tmpdir(), 'quire-render-output-'));
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'letter', latex_with_placeholders: LETTER } });
    assert.equal(created.statusCode, 201, created.body);
    templateId = created.json().template.id;
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;
  const get = (url: string) => t.app.inject({ url: url.replace(/^https?:\/\/[^/]+/, '') });
  const pdfinfo = async (url: string) => {
    const res = await get(url);
    assert.equal(res.statusCode, 200);
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, res.rawPayload);
    return execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  };
  const render = (payload: unknown) => t.app.inject({ method: 'POST', url: `/api/v2/templates/${templateId}/render`, headers: pro.headers, payload: payload as object });

  it('a V2 render writes the metadata and returns page images (sync), and async answers the same fields', async () => {
    const res = await render({ data: { name: 'Ada', amount: 10 }, output: { metadata: { title: 'Reminder for Ada', author: 'ACME' }, page_images: { pages: [1], dpi: 72 } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
    const body = res.json();
    assert.equal(body.template.name, 'letter');
    const info = await pdfinfo(body.pdf_url);
    assert.match(info, /Title:\s+Reminder for Ada\n/);
    assert.match(info, /Author:\s+ACME\n/);
    const [image] = body.page_images as PageImage[];
    // A4 at 72 dpi.
    assert.deepEqual([body.page_images.length, image!.page, image!.width, image!.height], [1, 1, 596, 842]);
    const png = await get(image!.url);
    assert.equal(png.statusCode, 200);
    assert.equal(png.headers['content-type'], 'image/png');
    assert.equal(png.rawPayload.readUInt32BE(16), 596);

    const accepted = await render({ data: { name: 'Bob', amount: 5 }, async: true, output: { metadata: { title: 'Reminder for Bob' } } });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${accepted.json().job_id}`, headers: pro.headers })).json(), undefined, 60_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job).slice(0, 1000));
    assert.match(await pdfinfo((job.result as { pdf_url: string }).pdf_url), /Title:\s+Reminder for Bob\n/);
  });

  it('a public gallery render takes output too', async () => {
    const detail = (await t.app.inject({ url: '/api/v1/public_templates/certificate-classic' })).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/public_templates/certificate-classic/render',
      headers: pro.headers,
      payload: { data: detail.sample_data, output: { metadata: { title: 'Gallery certificate', subject: 'Completion' } } },
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
    const info = await pdfinfo(res.json().pdf_url);
    assert.match(info, /Title:\s+Gallery certificate\n/);
    assert.match(info, /Subject:\s+Completion\n/);
  });

  it("a batch applies its output to each item, an item's own fields over it", async () => {
    const before = await used();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v2/templates/${templateId}/render_batch`,
      headers: pro.headers,
      payload: {
        items: [{ name: 'Ada', amount: 1 }, { name: 'Bob', amount: 2 }, { name: 'Cy', amount: 3 }],
        output: { metadata: { title: 'Batch letter' }, page_images: { pages: [1] } },
        outputs: [{}, { metadata: { title: 'Letter for Bob', author: 'Bob' } }, { page_images: { pages: [1], dpi: 200 }, linearize: true }],
      },
    });
    assert.equal(res.statusCode, 202, res.body);
    const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: pro.headers })).json(), undefined, 90_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job).slice(0, 1000));
    type Entry = { index: number; status: number; result: { pdf_url: string; page_images?: PageImage[] } };
    const items = (job.result as { items: Entry[] }).items;
    assert.deepEqual(items.map((i) => i.status), [200, 200, 200], JSON.stringify(items).slice(0, 1000));
    assert.match(await pdfinfo(items[0]!.result.pdf_url), /Title:\s+Batch letter\n/);
    assert.deepEqual(items[0]!.result.page_images!.map((p) => [p.page, p.width]), [[1, 596]]);
    const bob = await pdfinfo(items[1]!.result.pdf_url);
    assert.match(bob, /Title:\s+Letter for Bob\n/);
    assert.match(bob, /Author:\s+Bob\n/);
    assert.equal(items[1]!.result.page_images!.length, 1, 'the batch page_images stay for an item that does not name them');
    const cy = await pdfinfo(items[2]!.result.pdf_url);
    assert.match(cy, /Title:\s+Batch letter\n/);
    assert.match(cy, /Optimized:\s+yes/);
    assert.deepEqual(items[2]!.result.page_images!.map((p) => [p.page, p.width, p.height]), [[1, 1654, 2339]]);
    assert.equal(await used(), before + 3);
  });

  it('Factur-X: a V2 invoice renders as PDF/A-3b carrying its XML byte for byte, and as PDF/A-2b', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'invoice', latex_with_placeholders: INVOICE } });
    assert.equal(created.statusCode, 201, created.body);
    const data = { number: '2026-001', date: '2026-03-10', buyer: 'Müller & Söhne GmbH', lines: [{ description: 'Consulting', amount: '1000.00' }, { description: 'Travel', amount: '190.00' }], total: '1190.00' };
    const xml = facturX(data);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v2/templates/invoice/render',
      headers: pro.headers,
      payload: {
        data,
        output: {
          pdf_standard: 'a-3b',
          metadata: { title: 'Invoice 2026-001', author: 'ACME GmbH', lang: 'de-DE' },
          attachments: { 'factur-x.xml': { content_base64: Buffer.from(xml).toString('base64'), relationship: 'Data', mime_type: 'text/xml', description: 'Factur-X invoice' } },
        },
      },
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 3000));
    const file = join(dir, 'invoice-a3b.pdf');
    writeFileSync(file, (await get(res.json().pdf_url)).rawPayload);
    assert.equal(execFileSync('qpdf', ['--show-attachment=factur-x.xml', file]).toString('utf8'), xml);
    const listing = execFileSync('qpdf', ['--list-attachments', '--verbose', file], { encoding: 'utf8' });
    assert.match(listing, /factur-x\.xml/);
    assert.match(listing, /mime type: text\/xml/);
    // A PDF/A-3 associated file: /AFRelationship on its file spec, listed in the catalog's /AF.
    const objects = pdfObjects(file);
    const spec = Object.entries(objects).find(([, o]) => o.value?.['/AFRelationship'] === '/Data');
    assert.ok(spec, 'a file spec with /AFRelationship /Data');
    const catalog = Object.values(objects).find((o) => o.value?.['/Type'] === '/Catalog');
    const af = catalog?.value?.['/AF'];
    const afList = typeof af === 'string' ? objects[`obj:${af}`]?.value : af;
    assert.ok(Array.isArray(afList) && afList.includes(spec[0].slice(4)), `the catalog /AF names it: ${JSON.stringify(afList)}`);
    const xmp = execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' });
    assert.match(xmp, /pdfaid:part(>|=")3/);
    assert.match(xmp, /pdfaid:conformance(>|=")B/);
    // The Factur-X properties, their level read from the XML's guideline, and their declared schema.
    assert.match(xmp, /<fx:ConformanceLevel>MINIMUM<\/fx:ConformanceLevel>/);
    assert.match(xmp, /<fx:DocumentFileName>factur-x\.xml<\/fx:DocumentFileName>/);
    assert.match(xmp, /<fx:DocumentType>INVOICE<\/fx:DocumentType>/);
    assert.match(xmp, /<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#<\/pdfaSchema:namespaceURI>\s*<pdfaSchema:prefix>fx</);
    assert.equal(unbalancedTag(xmp), null, 'the XMP is still well nested');
    assert.match(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }), /Müller & Söhne GmbH/);

    const a2b = await t.app.inject({ method: 'POST', url: '/api/v2/templates/invoice/render', headers: pro.headers, payload: { data, output: { pdf_standard: 'a-2b', metadata: { title: 'Invoice 2026-001' } } } });
    assert.equal(a2b.statusCode, 200, a2b.body.slice(0, 3000));
    const file2 = join(dir, 'invoice-a2b.pdf');
    writeFileSync(file2, (await get(a2b.json().pdf_url)).rawPayload);
    const xmp2 = execFileSync('pdfinfo', ['-meta', file2], { encoding: 'utf8' });
    assert.match(xmp2, /pdfaid:part(>|=")2/);
    assert.match(xmp2, /pdfaid:conformance(>|=")B/);
    // The structural check, read back: an output intent, no encryption, every font embedded, no attachment.
    const root = Object.values(pdfObjects(file2)).find((o) => o.value?.['/Type'] === '/Catalog');
    assert.ok(root?.value?.['/OutputIntents'], 'the catalog has /OutputIntents');
    assert.match(execFileSync('pdfinfo', [file2], { encoding: 'utf8' }), /Encrypted:\s+no/);
    const fonts = execFileSync('pdffonts', [file2], { encoding: 'utf8' }).split('\n').slice(2).filter(Boolean);
    // pdffonts columns: name, type, encoding, emb, sub, uni, object, generation.
    assert.ok(fonts.length > 0 && fonts.every((line) => /\syes\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+$/.test(line)), fonts.join('\n'));
    assert.equal(execFileSync('qpdf', ['--list-attachments', file2], { encoding: 'utf8' }).trim(), `${file2} has no embedded files`);
  });

  it('a malformed output option is 422 validation_failed with the field path on every door, and costs nothing', async () => {
    const before = await used();
    const bad = { page_images: { pages: [1], dpi: 300 } };
    const doors = [
      await render({ data: { name: 'Ada', amount: 1 }, output: bad }),
      await render({ data: { name: 'Ada', amount: 1 }, async: true, output: bad }),
      await t.app.inject({ method: 'POST', url: '/api/v1/public_templates/certificate-classic/render', headers: pro.headers, payload: { data: {}, output: bad } }),
      await t.app.inject({ method: 'POST', url: `/api/v2/templates/${templateId}/render_batch`, headers: pro.headers, payload: { items: [{ name: 'Ada', amount: 1 }], output: bad } }),
    ];
    for (const res of doors) {
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error, 'validation_failed');
      assert.deepEqual(res.json().fields.map((f: { field: string }) => f.field), ['output.page_images.dpi'], res.body);
    }
    const item = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${templateId}/render_batch`, headers: pro.headers, payload: { items: [{ name: 'Ada', amount: 1 }], outputs: [{ colour: 'red' }] } });
    assert.equal(item.statusCode, 422, item.body);
    assert.equal(item.json().error, 'validation_failed');
    assert.ok(item.json().fields.some((f: { field: string }) => f.field.startsWith('outputs.0')), item.body);
    const conflict = await render({ data: { name: 'Ada', amount: 1 }, output: { encrypt: { owner_password: 'o' }, pdf_standard: 'a-2b' } });
    assert.equal(conflict.statusCode, 422);
    assert.deepEqual(conflict.json().fields.map((f: { field: string }) => f.field).sort(), ['output.encrypt', 'output.pdf_standard']);
    assert.equal(await used(), before);
  });
});
