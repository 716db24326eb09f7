// output.einvoice (issue 41) end to end, with real TeX, qpdf and the official rules: every invoice
// fixture of test/fixtures/einvoice/ is compiled into a PDF/A-3b whose embedded XML, extracted
// with `qpdf --show-attachment`, is the XML the answer was validated on and validates with zero
// errors again here (EN 16931 schematron, XRechnung's for that profile); the file name,
// /AFRelationship and the Factur-X XMP follow the profile. An invoice whose totals do not add
// up is 422 einvoice_invalid naming BR-CO-10, before TeX, and costs nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROFILES } from '../../src/einvoice/build.js';
import type { Invoice } from '../../src/einvoice/model.js';
import type { EinvoiceProfile } from '../../src/einvoice/report.js';
import { validateInvoiceXml } from '../../src/einvoice/validate.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/einvoice');
type Fixture = { profile: EinvoiceProfile; invoice: Invoice };
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => ({ name, ...(JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Fixture) }));

const latex = (number: string) => String.raw`\documentclass{article}
\begin{document}
\section*{Invoice ${number}}
The structured invoice is embedded in this PDF.
\end{document}
`;

/** The objects of a PDF as qpdf's JSON has them (`obj:N 0 R` → value). */
function pdfObjects(file: string): Record<string, { value?: Record<string, unknown> }> {
  const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file]).toString('utf8')) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>] };
  return json.qpdf[1];
}

describe('output.einvoice', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;
  const get = (url: string) => t.app.inject({ url: url.replace(/^https?:\/\/[^/]+/, '') });
  const compile = (number: string, output: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: latex(number), output } as object });

  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
    dir = mkdtempSync(join(tmpdir(), 'quire-einvoice-'));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has at least 20 fixtures covering every profile, a credit note, reverse charge and a foreign currency', () => {
    assert.ok(fixtures.length >= 20, `${fixtures.length} fixtures`);
    assert.deepEqual([...new Set(fixtures.map((f) => f.profile))].sort(), Object.keys(PROFILES).sort());
    const invoices = fixtures.map((f) => f.invoice);
    assert.ok(invoices.some((i) => i.type_code === '381'));
    assert.ok(invoices.some((i) => i.currency !== 'EUR'));
    assert.ok(invoices.some((i) => i.lines.some((l) => l.vat.category === 'AE')));
    assert.ok(fixtures.some((f) => f.profile === 'xrechnung' && /^\d{2,12}(-[A-Z0-9]{1,30})?-\d{2}$/.test(f.invoice.buyer_reference ?? '')));
  });

  for (const fixture of fixtures) {
    it(`${fixture.name}: a PDF/A-3b with ${PROFILES[fixture.profile].fileName} that validates with zero errors`, async () => {
      const profile = PROFILES[fixture.profile];
      const res = await compile(fixture.invoice.number, { einvoice: { profile: fixture.profile, invoice: fixture.invoice } });
      assert.equal(res.statusCode, 200, res.body.slice(0, 3000));
      const body = res.json();
      assert.equal(body.einvoice.valid, true);
      assert.deepEqual(body.einvoice.errors, []);
      assert.equal(typeof body.einvoice.rules_version, 'string');
      const file = join(dir, fixture.name.replace(/\.json$/, '.pdf'));
      writeFileSync(file, (await get(body.pdf_url)).rawPayload);

      const xml = execFileSync('qpdf', [`--show-attachment=${profile.fileName}`, file]);
      assert.match(xml.toString('utf8'), /^<\?xml[^>]*>\s*<rsm:CrossIndustryInvoice /);
      const report = await validateInvoiceXml(xml, { profile: fixture.profile });
      assert.deepEqual(report.errors, [], `${fixture.name}: ${JSON.stringify(report.errors.slice(0, 5))}`);
      assert.equal(report.valid, true);
      assert.equal(report.syntax, 'CII');

      // The associated file: its relationship per profile, listed in the catalog's /AF.
      const objects = pdfObjects(file);
      const spec = Object.entries(objects).find(([, o]) => o.value?.['/AFRelationship'] !== undefined);
      assert.equal(spec?.[1].value?.['/AFRelationship'], `/${profile.relationship}`);
      const catalog = Object.values(objects).find((o) => o.value?.['/Type'] === '/Catalog');
      const af = catalog?.value?.['/AF'];
      const afList = typeof af === 'string' ? objects[`obj:${af}`]?.value : af;
      assert.ok(Array.isArray(afList) && afList.includes(spec![0].slice(4)), `the catalog /AF names it: ${JSON.stringify(afList)}`);

      // PDF/A-3b and the Factur-X XMP with its extension schema.
      const xmp = execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' });
      assert.match(xmp, /pdfaid:part(>|=")3/);
      assert.match(xmp, /pdfaid:conformance(>|=")B/);
      assert.match(xmp, new RegExp(`<fx:ConformanceLevel>${profile.level}</fx:ConformanceLevel>`));
      assert.match(xmp, new RegExp(`<fx:DocumentFileName>${profile.fileName.replace('.', '\\.')}</fx:DocumentFileName>`));
      assert.match(xmp, /<fx:DocumentType>INVOICE<\/fx:DocumentType>/);
      assert.match(xmp, /<fx:Version>1\.0<\/fx:Version>/);
      assert.match(xmp, /<pdfaSchema:prefix>fx</);
    });
  }

  it('an invoice whose totals do not add up is 422 einvoice_invalid with BR-CO-10, before TeX, nothing charged', async () => {
    const bad = JSON.parse(readFileSync(join(FIXTURES, 'negative/totals-mismatch.json'), 'utf8')) as Fixture & { expect_rule: string };
    const before = await used();
    const res = await compile(bad.invoice.number, { einvoice: { profile: bad.profile, invoice: bad.invoice } });
    assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
    const body = res.json();
    assert.equal(body.error, 'einvoice_invalid');
    assert.equal(body.profile, 'en16931');
    assert.ok(body.rules.includes(bad.expect_rule), JSON.stringify(body.rules));
    assert.equal(body.einvoice.valid, false);
    assert.ok(body.einvoice.errors.some((e: { rule: string; location: string }) => e.rule === 'BR-CO-10' && e.location.length > 0));
    assert.equal(body.log, undefined, 'TeX never ran');
    assert.equal(await used(), before);
  });

  it('refuses what contradicts an e-invoice with validation_failed, nothing charged', async () => {
    const invoice = fixtures[0]!.invoice;
    const before = await used();
    const cases: Array<[unknown, string, string]> = [
      [{ einvoice: { profile: 'en16931', invoice }, pdf_standard: 'a-2b' }, 'output.pdf_standard', 'conflict'],
      [{ einvoice: { profile: 'en16931', invoice }, attachments: { 'factur-x.xml': { content_base64: 'PHg+PC94Pg==' } } }, 'output.attachments.factur-x.xml', 'conflict'],
      [{ einvoice: { profile: 'en16931', from_data: { number: '$.n' } } }, 'output.einvoice.from_data', 'render'],
      [{ einvoice: { profile: 'en16931' } }, 'output.einvoice.invoice', 'required'],
    ];
    for (const [output, field, rule] of cases) {
      const res = await compile('x', output);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error, 'validation_failed');
      assert.deepEqual(res.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [[field, rule]]);
    }
    const schema = await compile('x', { einvoice: { profile: 'en16931', invoice: { ...invoice, issue_date: '10.03.2026' } } });
    assert.equal(schema.statusCode, 422);
    assert.equal(schema.json().fields[0].field, 'output.einvoice.invoice.issue_date');
    assert.equal(await used(), before);
  });
});
