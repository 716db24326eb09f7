// The `output` object of POST /api/v1/compile (issue 23) end to end: real TeX in the real
// sandbox, real qpdf/poppler/PDFBox, the real app. Assertions are grouped per compile to
// keep TeX runs few; every refusal is checked to cost nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { watermarkPdf } from '../../src/tex/output/watermark.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const TWO_PAGES = '\\documentclass{article}\n\\begin{document}\nFirst page.\\newpage Second page.\n\\end{document}\n';
const FACTURX = '<?xml version="1.0" encoding="UTF-8"?>\n<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"><!-- ü & é --></rsm:CrossIndustryInvoice>\n';

const path = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};

describe('compile output options', () => {
  const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const compile = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: payload as object, headers: pro.headers });
  const used = async () => (await t.services.counters.get(monthlyCompilesKey(pro.id, clock.now()))).used;
  const fetchPdf = async (url: string) => {
    const res = await t.app.inject({ method: 'GET', url: path(url) });
    assert.equal(res.statusCode, 200);
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    await writeFile(file, res.rawPayload);
    return file;
  };
  const tool = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });

  before(async () => {
    t = await testApp({ clock });
    pro = await createAccount(t.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-output-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('metadata, watermark, page images, compress, linearize and encryption in one compile', async () => {
    const before = await used();
    const res = await compile({
      latex: TWO_PAGES,
      output: {
        metadata: { title: 'Payslip <März> & "Co"', author: 'Jane Doe', subject: 'Pay', keywords: ['pay', 'march'], lang: 'de-DE', creator: 'Quire tests' },
        watermark: { text: 'CONFIDENTIAL', angle: 0, opacity: 0.3, color: '#ff0000', pages: [2] },
        page_images: { pages: [1, 2], dpi: 100 },
        compress: true,
        linearize: true,
        encrypt: { user_password: 'open-me', owner_password: 'owner-secret', permissions: { print: false, copy: false } },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.pages, 2);
    assert.equal(await used(), before + 1);
    const file = await fetchPdf(body.pdf_url);

    const encryption = tool('qpdf', ['--show-encryption', '--password=open-me', file]);
    assert.match(encryption, /R = 6/);
    assert.match(encryption, /print high resolution: not allowed/);
    assert.match(encryption, /extract for any purpose: not allowed/);
    assert.throws(() => tool('pdfinfo', [file]), 'no password, no document');
    const info = tool('pdfinfo', ['-upw', 'open-me', file]);
    assert.match(info, /Encrypted:\s+yes \(print:no copy:no .*AES-256\)/);
    assert.match(info, /Optimized:\s+yes/);
    assert.match(info, /Title:\s+Payslip <März> & "Co"/);
    assert.match(info, /Author:\s+Jane Doe/);
    assert.match(info, /Keywords:\s+pay, march/);
    const xmp = tool('pdfinfo', ['-meta', '-upw', 'open-me', file]);
    assert.match(xmp, /<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Payslip &#60;März&#62; &#38; &#34;Co&#34;<\/rdf:li>/);
    assert.match(xmp, /<dc:language><rdf:Bag><rdf:li>de-DE<\/rdf:li>/);
    assert.doesNotMatch(tool('pdftotext', ['-upw', 'open-me', '-f', '1', '-l', '1', file, '-']), /CONFIDENTIAL/);
    assert.match(tool('pdftotext', ['-upw', 'open-me', '-f', '2', '-l', '2', file, '-']), /CONFIDENTIAL/);

    assert.equal(body.page_images.length, 2);
    for (const [i, image] of (body.page_images as Array<{ page: number; url: string; width: number; height: number }>).entries()) {
      assert.equal(image.page, i + 1);
      // A4 at 100 dpi.
      assert.deepEqual([image.width, image.height], [827, 1170]);
      const png = await t.app.inject({ method: 'GET', url: path(image.url) });
      assert.equal(png.statusCode, 200);
      assert.equal(png.headers['content-type'], 'image/png');
      assert.deepEqual([...png.rawPayload.subarray(1, 4)], [...Buffer.from('PNG')]);
      assert.equal(png.rawPayload.readUInt32BE(16), 827);
    }
    const forged = await t.app.inject({ method: 'GET', url: path(body.page_images[0].url).replace('/pages/1.png', '/pages/2.png') });
    assert.equal(forged.statusCode, 403);
    assert.equal(forged.json().error, 'invalid_signature');
  });

  test('PDF/A-1b from every engine passes PDFBox Preflight, with the metadata in Info and XMP', async () => {
    for (const compiler of ['pdflatex', 'xelatex', 'lualatex'] as const) {
      const res = await compile({ latex: HELLO, compiler, output: { pdf_standard: 'a-1b', metadata: { title: `Archive {${compiler}} 100% #1`, author: 'A. Author', lang: 'en-GB' } } });
      assert.equal(res.statusCode, 200, `${compiler}: ${res.body.slice(0, 2000)}`);
      const file = await fetchPdf(res.json().pdf_url);
      const info = tool('pdfinfo', [file]);
      assert.match(info, new RegExp(`Title:\\s+Archive \\{${compiler}\\} 100% #1`));
      // xelatex gets the job's own date (pdfx's fallback would write 2018).
      assert.doesNotMatch(info, /CreationDate:.*2018/);
      const xmp = tool('pdfinfo', ['-meta', file]);
      assert.match(xmp, /pdfaid:part(>|=")1/);
      assert.match(xmp, /pdfaid:conformance(>|=")B/);
    }
  });

  test('a Factur-X style PDF/A-3b carries the invoice XML byte for byte', async () => {
    const res = await compile({
      latex: HELLO,
      output: {
        pdf_standard: 'a-3b',
        metadata: { title: 'Invoice 1' },
        attachments: { 'factur-x.xml': { content_base64: Buffer.from(FACTURX).toString('base64'), relationship: 'Data', mime_type: 'text/xml', description: 'Factur-X invoice' } },
      },
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
    const file = await fetchPdf(res.json().pdf_url);
    assert.match(tool('pdfinfo', ['-meta', file]), /pdfaid:part(>|=")3/);
    assert.equal(execFileSync('qpdf', ['--show-attachment=factur-x.xml', file]).toString('utf8'), FACTURX);
    assert.match(tool('qpdf', ['--list-attachments', '--verbose', file]), /factur-x\.xml/);
  });

  test('a document with transparency gets pdf_standard_failed with the validator\'s reasons, and costs nothing', async () => {
    const before = await used();
    const latex = '\\documentclass{article}\n\\begin{document}\nSee through.\\pdfpageresources{/ExtGState << /T << /ca 0.5 >> >>}\\pdfliteral{/T gs}\n\\end{document}\n';
    const res = await compile({ latex, output: { pdf_standard: 'a-1b' } });
    assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
    const body = res.json();
    assert.equal(body.error, 'pdf_standard_failed');
    assert.equal(body.pdf_standard, 'a-1b');
    assert.ok(body.reasons.some((r: string) => /PDFBox Preflight/.test(r)), body.reasons.join('\n'));
    assert.equal(typeof body.log, 'string');
    assert.equal(await used(), before);
  });

  test("a watermark from the caller's PDF asset, over the pages asked or under every page; a bad asset is refused", async () => {
    const stamp = watermarkPdf({ text: 'STAMPED', opacity: 1, angle: 0, color: [0, 0, 0] }).toString('base64');
    const over = await compile({ latex: TWO_PAGES, assets: { 'stamp.pdf': stamp }, output: { watermark: { asset: 'stamp.pdf', pages: [2] } } });
    assert.equal(over.statusCode, 200, over.body.slice(0, 2000));
    const file = await fetchPdf(over.json().pdf_url);
    assert.doesNotMatch(tool('pdftotext', ['-f', '1', '-l', '1', file, '-']), /STAMPED/);
    assert.match(tool('pdftotext', ['-f', '2', '-l', '2', file, '-']), /STAMPED/);
    const under = await compile({ latex: TWO_PAGES, assets: { 'stamp.pdf': stamp }, output: { watermark: { asset: 'stamp.pdf', underlay: true } } });
    assert.equal(under.statusCode, 200, under.body.slice(0, 2000));
    const both = await fetchPdf(under.json().pdf_url);
    for (const page of ['1', '2']) assert.match(tool('pdftotext', ['-f', page, '-l', page, both, '-']), /STAMPED[\s\S]*(First|Second) page|(First|Second) page[\s\S]*STAMPED/);

    const before = await used();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const cases: Array<[Record<string, unknown>, unknown, string, string]> = [
      [{}, { asset: 'stamp.pdf' }, 'output.watermark.asset', 'asset'],
      [{ 'logo.png': png }, { asset: 'logo.png' }, 'output.watermark.asset', 'format'],
      [{ 'stamp.pdf': stamp }, { asset: 'stamp.pdf', text: 'DRAFT' }, 'output.watermark', 'one_of'],
      [{ 'stamp.pdf': stamp }, { pages: [1] }, 'output.watermark', 'one_of'],
    ];
    for (const [assets, watermark, name, rule] of cases) {
      const res = await compile({ latex: HELLO, ...(Object.keys(assets).length ? { assets } : {}), output: { watermark } });
      assert.equal(res.statusCode, 422, res.body.slice(0, 500));
      assert.equal(res.json().error, 'validation_failed');
      assert.deepEqual(res.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [[name, rule]]);
    }
    assert.equal(await used(), before);
  });

  test('bad output options: 4xx catalogue codes, nothing charged, nothing stored', async () => {
    const before = await used();
    const pdfsBefore = (await t.services.db.kysely.selectFrom('pdfs').select('id').execute()).length;
    const cases: Array<[unknown, number, string, string?]> = [
      [{ colour: true }, 422, 'validation_failed', 'output.colour'],
      [{ linearize: 'yes' }, 422, 'validation_failed', 'output.linearize'],
      [{ encrypt: { owner_password: 'x'.repeat(128) } }, 422, 'validation_failed', 'output.encrypt.owner_password'],
      [{ page_images: { pages: [1], dpi: 300 } }, 422, 'validation_failed', 'output.page_images.dpi'],
      [{ page_images: { pages: [1], dpi: 71 } }, 422, 'validation_failed', 'output.page_images.dpi'],
      [{ encrypt: { owner_password: 'o' }, pdf_standard: 'a-2b' }, 422, 'validation_failed', 'output.encrypt'],
      [{ attachments: { '../x.xml': { content_base64: 'AA==' } } }, 422, 'invalid_asset_filename'],
      [{ attachments: { 'x.xml': { content_base64: '!!' } } }, 422, 'invalid_asset_encoding'],
      [{ attachments: { 'big.xml': { content_base64: Buffer.alloc(26 * 1024 * 1024).toString('base64') } } }, 413, 'assets_too_large'],
    ];
    for (const [output, status, code, field] of cases) {
      const res = await compile({ latex: HELLO, output });
      assert.equal(res.statusCode, status, `${JSON.stringify(output).slice(0, 80)}: ${res.body.slice(0, 300)}`);
      assert.equal(res.json().error, code);
      if (field) assert.ok(res.json().fields.some((f: { field: string }) => f.field === field), res.body.slice(0, 500));
      assert.doesNotMatch(res.body, /x{128}/, 'a password is never echoed');
    }
    const both = (await compile({ latex: HELLO, output: { encrypt: { owner_password: 'o' }, pdf_standard: 'a-2b' } })).json();
    assert.deepEqual(both.fields.map((f: { field: string }) => f.field).sort(), ['output.encrypt', 'output.pdf_standard']);
    assert.equal(await used(), before);
    assert.equal((await t.services.db.kysely.selectFrom('pdfs').select('id').execute()).length, pdfsBefore);
  });
});
