// POST /api/v1/einvoice/validate and the MCP tool validate_einvoice: the same rule ids as the
// module for the same XML, from text, base64 and inside a Factur-X PDF; bad input is a 4xx
// catalogue code; hostile XML (entity bomb, external entity with a canary file, 10 MB, 100,000
// deep) is refused before any parser sees it, and /health answers while validations run.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDF } from '@libpdf/core';
import { rulesPool } from '../../src/einvoice/pool.js';
import { testApp, type TestApp } from '../helpers.js';
import { callTool } from '../mcp/call.js';
import { CII_VALID, NEGATIVE, XRECHNUNG_VALID } from './fixtures.js';

type Report = { profile: string | null; syntax: string; valid: boolean; rules_version: string; errors: { rule: string }[]; warnings: { rule: string }[] };

const CII_OPEN = '<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100">';

async function facturX(xml: string, name = 'factur-x.xml'): Promise<string> {
  const pdf = PDF.create();
  pdf.addPage();
  await pdf.attachments.add(name, new TextEncoder().encode(xml), { mimeType: 'text/xml' });
  return Buffer.from(await pdf.save()).toString('base64');
}

describe('POST /api/v1/einvoice/validate and validate_einvoice', () => {
  let t: TestApp;
  let canaryDir: string;
  const CANARY = `quire-canary-${process.pid}-${Date.now()}`;

  before(async () => {
    t = await testApp({ env: { QUIRE_VALIDATE_PER_MINUTE: '1000' } });
    canaryDir = await mkdtemp(join(tmpdir(), 'einv-canary-'));
    await writeFile(join(canaryDir, 'secret.txt'), CANARY);
  });
  after(async () => {
    await rulesPool().close();
    await t.close();
    await rm(canaryDir, { recursive: true, force: true });
  });

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/einvoice/validate', payload: payload as object, headers: { 'content-type': 'application/json', ...headers } });

  it('a valid invoice: 200, valid, keyless', async () => {
    const res = await post({ xml: CII_VALID });
    assert.equal(res.statusCode, 200, res.body);
    const report = res.json() as Report;
    assert.equal(report.valid, true);
    assert.deepEqual(report.errors, []);
    assert.equal(report.profile, 'en16931');
    assert.equal(report.rules_version, 'CII D16B XSD; EN 16931 1.3.16 (CII)');
  });

  it('each broken invoice: 200 with the same rule id as the module, from xml and from xml_base64', async () => {
    for (const negative of NEGATIVE) {
      for (const payload of [{ xml: negative.xml }, { xml_base64: Buffer.from(negative.xml).toString('base64') }]) {
        const res = await post(payload);
        assert.equal(res.statusCode, 200, res.body);
        const report = res.json() as Report;
        assert.equal(report.valid, false);
        assert.ok(report.errors.some((f) => f.rule === negative.rule), `${negative.name}: ${negative.rule} not in ${res.body.slice(0, 400)}`);
      }
    }
  });

  it('the XML inside a Factur-X PDF (factur-x.xml, or xrechnung.xml), and a PDF without one', async () => {
    const broken = NEGATIVE[0];
    const res = await post({ pdf_base64: await facturX(broken.xml) });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok((res.json() as Report).errors.some((f) => f.rule === broken.rule), res.body);
    const xr = await post({ pdf_base64: await facturX(XRECHNUNG_VALID, 'xrechnung.xml') });
    assert.equal(xr.statusCode, 200, xr.body);
    assert.equal((xr.json() as Report).profile, 'xrechnung');
    const none = await post({ pdf_base64: await facturX(CII_VALID, 'notes.xml') });
    assert.equal(none.statusCode, 422, none.body);
    assert.equal(none.json().error, 'einvoice_pdf_refused');
    assert.equal(none.json().reason, 'no_invoice_xml');
    assert.deepEqual(none.json().attachments, ['notes.xml']);
  });

  it('the MCP tool gives the same report and ids', async () => {
    const broken = NEGATIVE[1];
    const result = await callTool(t.app, {}, 'validate_einvoice', { xml: broken.xml });
    assert.equal(result.isError, undefined);
    const report = result.structuredContent as unknown as Report;
    assert.ok(report.errors.some((f) => f.rule === broken.rule));
    assert.match(result.content[0]!.text!, new RegExp(`error ${broken.rule}:`));
    const refused = await callTool(t.app, {}, 'validate_einvoice', { xml: '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>' });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent.error, 'einvoice_xml_refused');
  });

  it('bad requests: none or two of the inputs, bad base64, an unknown profile → 422 validation_failed', async () => {
    for (const [payload, field] of [
      [{}, 'xml'],
      [{ xml: CII_VALID, pdf_base64: 'AAAA' }, 'pdf_base64'],
      [{ xml_base64: 'not base64!' }, 'xml_base64'],
      [{ xml: CII_VALID, profile: 'gold' }, 'profile'],
    ] as const) {
      const res = await post(payload);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error, 'validation_failed');
      assert.ok((res.json().fields as { field: string }[]).some((f) => f.field.includes(field)), res.body);
    }
  });

  const refused = async (xml: string, reason: string) => {
    const res = await post({ xml });
    assert.equal(res.statusCode, 422, res.body.slice(0, 300));
    assert.equal(res.json().error, 'einvoice_xml_refused');
    assert.equal(res.json().reason, reason, res.body.slice(0, 300));
    assert.ok(!res.body.includes(CANARY), 'the canary leaked');
    return res;
  };

  it('hostile: an entity bomb (billion laughs) is refused as a DOCTYPE', async () => {
    const lol = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`)].join('');
    await refused(`<?xml version="1.0"?><!DOCTYPE rsm:CrossIndustryInvoice [${lol}]>${CII_OPEN}&lol9;</rsm:CrossIndustryInvoice>`, 'doctype');
  });

  it('hostile: an external entity naming a canary file is refused, and the canary never comes back', async () => {
    const file = `file://${join(canaryDir, 'secret.txt')}`;
    await refused(`<!DOCTYPE x [<!ENTITY xxe SYSTEM "${file}">]>${CII_OPEN}&xxe;</rsm:CrossIndustryInvoice>`, 'doctype');
    await refused(`<!DOCTYPE rsm:CrossIndustryInvoice SYSTEM "${file}">${CII_OPEN}</rsm:CrossIndustryInvoice>`, 'doctype');
    // An undeclared entity reference is refused as such (no DTD could declare it).
    await refused(CII_VALID.replace('Buyercompany ltd', '&xxe;'), 'entity');
    // XInclude and a stylesheet PI are not followed by either parser: the invoice is checked as
    // it stands (the xi:include element is a schema error), and the canary is not read into it.
    const res = await post({ xml: CII_VALID.replace('<ram:TypeCode>380</ram:TypeCode>', `<ram:TypeCode>380</ram:TypeCode><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="${file}" parse="text"/>`).replace('?>', `?><?xml-stylesheet type="text/xsl" href="${file}"?>`) });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(!res.body.includes(CANARY), 'the canary leaked');
    assert.ok((res.json() as Report).errors.some((f) => f.rule === 'XSD'), res.body);
  });

  it('hostile: 10 MB is refused, as xml and as xml_base64', async () => {
    const big = CII_OPEN + '<x>' + 'a'.repeat(10 * 1024 * 1024) + '</x></rsm:CrossIndustryInvoice>';
    const res = await refused(big, 'too_large');
    assert.equal(res.json().limit, 2 * 1024 * 1024);
    const b64 = await post({ xml_base64: Buffer.from(big).toString('base64') });
    assert.equal(b64.statusCode, 422);
    assert.equal(b64.json().reason, 'too_large');
  });

  it('hostile: 100,000-deep nesting is refused, and /health answers while hostile and real validations run', async () => {
    const deep = CII_OPEN + '<a>'.repeat(100_000) + '</a>'.repeat(100_000) + '</rsm:CrossIndustryInvoice>';
    let running = 0;
    const work = [
      ...Array.from({ length: 4 }, () => post({ xml: deep })),
      ...Array.from({ length: 4 }, () => post({ xml: NEGATIVE[0].xml })),
    ].map((p) => {
      running++;
      return p.finally(() => running--);
    });
    const healthMs: number[] = [];
    await new Promise((resolve) => setTimeout(resolve, 50));
    while (running > 0 && healthMs.length < 20) {
      const start = performance.now();
      const health = await t.app.inject({ method: 'GET', url: '/health' });
      healthMs.push(performance.now() - start);
      assert.ok(health.statusCode === 200 || health.statusCode === 503, health.body);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const results = await Promise.all(work);
    assert.ok(healthMs.length >= 3, `/health was asked only ${healthMs.length} times while validations ran`);
    // The checks run in the rules worker: the event loop only parses JSON and copies text.
    const slowest = Math.max(...healthMs);
    assert.ok(slowest < 500, `/health took ${slowest.toFixed(0)} ms during validations`);
    for (const res of results.slice(0, 4)) {
      assert.equal(res.statusCode, 422, res.body.slice(0, 200));
      assert.equal(res.json().reason, 'too_deep');
      assert.equal(res.json().limit, 64);
    }
    for (const res of results.slice(4)) assert.equal(res.statusCode, 200);
  });
});
