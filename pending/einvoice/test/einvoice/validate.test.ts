// validateInvoiceXml with the vendored official rules, run by saxon-js and libxml2 in the rules
// worker: official examples give zero errors, each broken copy fails its rule, the profile picks
// the rule sets, and a warm validation is measured.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isServiceError } from '../../src/errors.js';
import { rulesPool } from '../../src/einvoice/pool.js';
import { validateInvoicePdf, validateInvoiceXml, warmInvoiceRules } from '../../src/einvoice/validate.js';
import { CII_VALID, NEGATIVE, UBL_VALID, XRECHNUNG_VALID } from './fixtures.js';

const rules = (findings: { rule: string }[]) => findings.map((f) => f.rule);

describe('e-invoice validation with the official rules', () => {
  before(() => warmInvoiceRules());
  after(() => rulesPool().close());

  it('a valid EN 16931 CII invoice: zero errors, the profile it declares, the rule sets that ran', async () => {
    const report = await validateInvoiceXml(CII_VALID);
    assert.deepEqual(report.errors, []);
    assert.equal(report.valid, true);
    assert.equal(report.syntax, 'CII');
    assert.equal(report.profile, 'en16931');
    assert.equal(report.rules_version, 'CII D16B XSD; EN 16931 1.3.16 (CII)');
  });

  it('the same invoice as bytes, and a valid UBL invoice', async () => {
    assert.equal((await validateInvoiceXml(new TextEncoder().encode(CII_VALID))).valid, true);
    const ubl = await validateInvoiceXml(UBL_VALID);
    assert.deepEqual(ubl.errors, []);
    assert.equal(ubl.syntax, 'UBL');
    assert.match(ubl.rules_version, /EN 16931 1\.3\.16 \(UBL\)/);
  });

  it('an XRechnung CII invoice is checked with KoSIT rules too: no error, its BR-DE warnings', async () => {
    const report = await validateInvoiceXml(XRECHNUNG_VALID);
    assert.equal(report.profile, 'xrechnung');
    assert.deepEqual(report.errors, []);
    assert.match(report.rules_version, /XRechnung schematron 2\.5\.0/);
    assert.ok(rules(report.warnings).includes('BR-DE-19'), JSON.stringify(report.warnings));
    // The same rules fail a plain EN 16931 invoice checked as XRechnung (no Leitweg-ID, BR-DE-15).
    const asked = await validateInvoiceXml(CII_VALID, { profile: 'xrechnung' });
    assert.equal(asked.profile, 'xrechnung');
    assert.equal(asked.valid, false);
    assert.ok(rules(asked.errors).includes('BR-DE-15'), JSON.stringify(rules(asked.errors)));
  });

  for (const negative of NEGATIVE) {
    it(`${negative.name} fails ${negative.rule}`, async () => {
      const report = await validateInvoiceXml(negative.xml);
      assert.equal(report.valid, false);
      const hit = report.errors.find((f) => f.rule === negative.rule);
      assert.ok(hit, `${negative.rule} not in ${JSON.stringify(rules(report.errors))}`);
      assert.ok(hit.message.includes(`[${negative.rule}]`), hit.message);
      assert.match(hit.location, /^\/rsm:CrossIndustryInvoice\[1\]/);
    });
  }

  it('an element the CII D16B schema does not allow is an XSD error with its line', async () => {
    const report = await validateInvoiceXml(CII_VALID.replace('<ram:TypeCode>380</ram:TypeCode>', '<ram:TypeCode>380</ram:TypeCode><ram:Colour>red</ram:Colour>'));
    const xsd = report.errors.filter((f) => f.rule === 'XSD');
    assert.equal(xsd.length, 1, JSON.stringify(report.errors));
    assert.match(xsd[0]!.message, /Element 'ram:Colour': This element is not expected/);
    assert.match(xsd[0]!.location, /^line \d+$/);
  });

  it('Factur-X MINIMUM is checked against the schema only, and the report says so', async () => {
    const report = await validateInvoiceXml(CII_VALID, { profile: 'minimum' });
    assert.equal(report.profile, 'minimum');
    assert.equal(report.rules_version, 'CII D16B XSD');
    assert.deepEqual(rules(report.warnings), ['PROFILE']);
  });

  it('a Factur-X profile on a UBL invoice is validation_failed on profile', async () => {
    await assert.rejects(validateInvoiceXml(UBL_VALID, { profile: 'basic' }), (err: unknown) => {
      assert.ok(isServiceError(err));
      assert.equal(err.code, 'validation_failed');
      assert.deepEqual((err.details.fields as { field: string }[]).map((f) => f.field), ['profile']);
      return true;
    });
  });

  it('XML that is not an invoice, and XML that is not well-formed, are einvoice_xml_refused', async () => {
    for (const [xml, reason] of [
      ['<note>hello</note>', 'not_an_invoice'],
      [CII_VALID.replace('</rsm:ExchangedDocument>', '</rsm:ExchangedDocumen>'), 'not_well_formed'],
    ] as const) {
      await assert.rejects(validateInvoiceXml(xml), (err: unknown) => isServiceError(err) && err.code === 'einvoice_xml_refused' && err.details.reason === reason);
    }
  });

  it('a PDF with no invoice inside is einvoice_pdf_refused', async () => {
    await assert.rejects(validateInvoicePdf(new TextEncoder().encode('not a pdf')), (err: unknown) => isServiceError(err) && err.code === 'einvoice_pdf_refused' && err.details.reason === 'not_pdf');
  });

  it('no rule reads another document: no document(), doc(), unparsed-text(), collection() or evaluate in the rules', () => {
    const vendor = join(import.meta.dirname, '..', '..', 'vendor', 'einvoice');
    const files = ['en16931/EN16931-CII-validation.xslt', 'en16931/EN16931-UBL-validation.xslt', 'xrechnung/cii/XRechnung-CII-validation.sch', 'xrechnung/ubl/XRechnung-UBL-validation.sch', 'xrechnung/common.sch'];
    for (const file of files) {
      const text = readFileSync(join(vendor, file), 'utf8');
      assert.ok(text.length > 1000, file);
      assert.doesNotMatch(text, /\b(document|doc|doc-available|unparsed-text|unparsed-text-lines|unparsed-text-available|collection|uri-collection|json-doc)\s*\(|evaluate|result-document/, file);
    }
  });

  it('warm: one validation of a CII invoice (schema + EN 16931) is measured', async (t) => {
    for (let i = 0; i < 3; i++) await validateInvoiceXml(CII_VALID);
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const start = performance.now();
      await validateInvoiceXml(CII_VALID);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const median = times[3]!;
    t.diagnostic(`warm CII validation: median ${median.toFixed(0)} ms, min ${times[0]!.toFixed(0)} ms`);
    // 200 ms on an idle machine (docs/einvoice.md); the bound here leaves room for a shared one.
    assert.ok(times[0]! < 1000, `fastest warm validation took ${times[0]!.toFixed(0)} ms`);
  });
});
