// output.einvoice on renders (issue 41): the gallery invoice renders as an EN 16931 and as an
// XRechnung e-invoice from the data it takes (gallery/_documents/invoice/einvoice-example.json,
// its mapping given as output.einvoice.from_data); a V2 template's batch gives each item its own
// invoice from its own data; the MCP render tool takes the same output. Real TeX, qpdf and the
// official rules (the embedded XML is extracted and validated again here).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { invoiceFromData } from '../../src/einvoice/from-data.js';
import { validateInvoiceXml } from '../../src/einvoice/validate.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';
import { callTool } from '../mcp/call.js';

const EXAMPLE = JSON.parse(readFileSync(join(import.meta.dirname, '../../gallery/_documents/invoice/einvoice-example.json'), 'utf8')) as {
  data: Record<string, unknown>;
  outputs: Record<'en16931' | 'xrechnung', { einvoice: { profile: string; from_data: unknown } }>;
};

const LETTER = String.raw`\documentclass{article}
\begin{document}
Invoice {{ invoice_number }} to {{ buyer.name }}: {{ items[0].description }}.
\end{document}
`;

describe('output.einvoice on renders', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const get = (url: string) => t.app.inject({ url: url.replace(/^https?:\/\/[^/]+/, '') });
  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;
  /** The XML embedded under `name` in the PDF behind `url`. */
  const embedded = async (url: string, name: string) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, (await get(url)).rawPayload);
    return { xml: execFileSync('qpdf', [`--show-attachment=${name}`, file]), xmp: execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' }), text: execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }) };
  };

  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
    dir = mkdtempSync(join(tmpdir(), 'quire-einvoice-render-'));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the mapping resolves paths, $each and $if, and leaves out what the data lacks', () => {
    const mapping = { n: '$.a.b', lines: { $each: '$.items', map: { q: '@.q', r: '$.rate', u: '@.unit' } }, off: { $if: '$.discount', then: ['$.discount'] }, lit: 'S', k: 7 };
    assert.deepEqual(invoiceFromData(mapping, { a: { b: 'X' }, items: [{ q: 1 }, { q: 2, unit: 'HUR' }], rate: 19 }), {
      n: 'X',
      lines: [{ q: 1, r: 19 }, { q: 2, r: 19, u: 'HUR' }],
      lit: 'S',
      k: 7,
    });
    assert.deepEqual(invoiceFromData(mapping, { a: {}, discount: 5 }), { off: [5], lit: 'S', k: 7 });
    assert.deepEqual(invoiceFromData({ x: '$.__proto__.polluted', y: '$.constructor' }, {}), {});
  });

  for (const profile of ['en16931', 'xrechnung'] as const) {
    for (const slug of ['invoice-classic', 'invoice-modern']) {
      it(`the gallery's ${slug} renders as a valid ${profile} e-invoice from its own data`, async () => {
        const res = await t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, headers: pro.headers, payload: { data: EXAMPLE.data, output: EXAMPLE.outputs[profile] } });
        assert.equal(res.statusCode, 200, res.body.slice(0, 3000));
        assert.equal(res.json().einvoice.valid, true);
        const name = profile === 'xrechnung' ? 'xrechnung.xml' : 'factur-x.xml';
        const { xml, xmp, text } = await embedded(res.json().pdf_url, name);
        const report = await validateInvoiceXml(xml, { profile });
        assert.deepEqual(report.errors, []);
        const source = xml.toString('utf8');
        assert.match(source, /<ram:ID>RE-2026-0815<\/ram:ID>/);
        assert.match(source, /<ram:GrandTotalAmount>3738\.98<\/ram:GrandTotalAmount>/);
        if (profile === 'xrechnung') assert.match(source, /<ram:BuyerReference>04011000-12345-03<\/ram:BuyerReference>/);
        assert.match(xmp, new RegExp(`<fx:ConformanceLevel>${profile === 'xrechnung' ? 'XRECHNUNG' : 'EN 16931'}</fx:ConformanceLevel>`));
        // The printed invoice and the XML come from the same data.
        assert.match(text, /RE-2026-0815/);
        assert.match(text, /3[.,]?738[.,]98/);
      });
    }
  }

  it('the MCP render_public_template and compile tools take output.einvoice and answer its report; a broken invoice is einvoice_invalid', async () => {
    const rendered = await callTool(t.app, pro.headers, 'render_public_template', { slug: 'invoice-classic', data: EXAMPLE.data, output: EXAMPLE.outputs.xrechnung });
    assert.equal(rendered.isError, undefined, JSON.stringify(rendered.structuredContent).slice(0, 2000));
    const body = rendered.structuredContent as { pdf_url: string; einvoice: { profile: string; valid: boolean } };
    assert.deepEqual([body.einvoice.profile, body.einvoice.valid], ['xrechnung', true]);
    const { xml } = await embedded(body.pdf_url, 'xrechnung.xml');
    assert.deepEqual((await validateInvoiceXml(xml, { profile: 'xrechnung' })).errors, []);
    const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/einvoice/negative/totals-mismatch.json'), 'utf8')) as { profile: string; invoice: unknown };
    const refused = await callTool(t.app, pro.headers, 'compile', { latex: LETTER.replace(/\{\{[^}]*\}\}/g, 'x'), output: { einvoice: { profile: fixture.profile, invoice: fixture.invoice } } });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent.error, 'einvoice_invalid');
    assert.ok((refused.structuredContent.rules as string[]).includes('BR-CO-10'));
  });

  it('a V2 batch derives each item\'s invoice from its own data; an item whose invoice is refused fails alone', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'einvoice-letter', latex_with_placeholders: LETTER } });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().template.id as number;
    const second = { ...EXAMPLE.data, invoice_number: 'RE-2026-0816', items: [{ description: 'Regal', quantity: 2, unit_price: 410 }] };
    const broken = { ...EXAMPLE.data, invoice_number: 'RE-2026-0817', issue_date: undefined };
    const before = await used();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v2/templates/${id}/render_batch`,
      headers: pro.headers,
      payload: { items: [EXAMPLE.data, second, broken], output: EXAMPLE.outputs.en16931 },
    });
    assert.equal(res.statusCode, 202, res.body);
    const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: pro.headers })).json(), undefined, 120_000);
    type Entry = { index: number; status: number; result?: { pdf_url: string; einvoice: { valid: boolean } }; error?: { error: string; fields?: Array<{ field: string }> } };
    const items = (job.result as { items: Entry[] }).items;
    assert.deepEqual(items.map((i) => i.status), [200, 200, 422], JSON.stringify(items).slice(0, 2000));
    assert.equal(items[2]!.error?.error, 'validation_failed');
    assert.equal(items[2]!.error?.fields?.[0]?.field, 'output.einvoice.invoice.issue_date');
    const first = await embedded(items[0]!.result!.pdf_url, 'factur-x.xml');
    const other = await embedded(items[1]!.result!.pdf_url, 'factur-x.xml');
    assert.match(first.xml.toString('utf8'), /RE-2026-0815/);
    assert.match(other.xml.toString('utf8'), /RE-2026-0816/);
    assert.match(other.xml.toString('utf8'), /<ram:LineTotalAmount>820\.00<\/ram:LineTotalAmount>/);
    assert.deepEqual((await validateInvoiceXml(other.xml, { profile: 'en16931' })).errors, []);
    assert.equal(await used(), before + 2);
  });
});
