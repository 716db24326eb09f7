// Tagged PDF and PDF/UA (issue 40) end to end: real TeX in the real sandbox, the real app.
// The delivered PDFs are read back independently of the service's own checks: with qpdf's
// JSON (catalog /Lang, /StructTreeRoot, the XMP) and with TeX Live's show-pdf-tags (the
// structure tree: H1/H2, the figure's alternate text, TH cells), run in the image's sandbox.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { runSandboxed } from '../../src/tex/sandbox/sandboxed.js';
import { sandboxUid } from '../../src/tex/sandbox/uids.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const TAGGED = [
  '\\documentclass{article}',
  '\\usepackage{graphicx}',
  '\\tagpdfsetup{table/header-rows={1}}',
  '\\begin{document}',
  '\\section{Results}',
  'The figure shows the plan.',
  '\\subsection{Details}',
  '\\includegraphics[alt={A grey test image with the word Image},width=3cm]{example-image}',
  '',
  '\\begin{tabular}{ll}',
  'Item & Amount\\\\',
  'Consulting & 1000\\\\',
  '\\end{tabular}',
  '\\end{document}',
  '',
].join('\n');
const META = { title: 'Quarterly report', lang: 'en-GB' };
const ALL_UA_CHECKS = [
  'structure_tree_root', 'mark_info_marked', 'figures_alt', 'heading_levels', 'tables_header_cells', 'pages_struct_parents',
  'annotations_tab_order', 'lang', 'display_doc_title', 'xmp_dc_title', 'xmp_pdfuaid', 'fonts_embedded', 'fonts_unicode',
];

interface Report {
  standards: string[];
  checks: Array<{ id: string; passed: boolean; detail: string }>;
  violations: string[];
  validators: string[];
}

describe('tagged PDF and PDF/UA', () => {
  const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const compile = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: payload as object, headers: pro.headers });
  const used = async () => (await t.services.counters.get(monthlyCompilesKey(pro.id, clock.now()))).used;
  const fetchPdf = async (url: string) => {
    const parsed = new URL(url);
    const res = await t.app.inject({ method: 'GET', url: parsed.pathname + parsed.search });
    assert.equal(res.statusCode, 200);
    return res.rawPayload;
  };
  /** The catalog as qpdf's JSON shows it, and the XMP packet. */
  const catalog = (pdf: Buffer) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    execFileSync('tee', [file], { input: pdf, stdio: ['pipe', 'ignore', 'inherit'] });
    const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8')) as {
      qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>];
    };
    const objects = json.qpdf[1];
    const resolve = (value: unknown) => (typeof value === 'string' && / R$/.test(value) ? objects[`obj:${value}`]!.value : value);
    const root = resolve(objects.trailer!.value!['/Root']) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(root).map(([key, value]) => [key, ['/MarkInfo', '/Lang', '/OutputIntents'].includes(key) ? resolve(value) : value]));
  };
  const xmp = (pdf: Buffer) => execFileSync('pdfinfo', ['-meta', '-'], { input: pdf }).toString('utf8');
  /** TeX Live's show-pdf-tags (texlua, in the image's sandbox) on `pdf`. */
  const showTags = async (pdf: Buffer) => {
    const work = await mkdtemp(join(dir, 'tags-'));
    await writeFile(join(work, 'in.pdf'), pdf);
    const uid = sandboxUid(65534);
    if (uid !== undefined) for (const name of ['', 'in.pdf']) await chown(join(work, name), uid, uid);
    const limits = { cpuSeconds: 30, fileBytes: 16 * 1024 * 1024, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    const run = await runSandboxed({ workspace: work, env: {}, isolate: true, limits, uid, root: defaultImageRoot() }, ['texlua', '/usr/share/texlive/texmf-dist/scripts/show-pdf-tags/show-pdf-tags.lua', 'in.pdf'], {
      timeoutMs: 30_000,
      maxOutput: 4 * 1024 * 1024,
    });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.toString('utf8');
  };

  before(async () => {
    t = await testApp({ clock, env: { QUIRE_PDF_CHECK_MAX_MB: '1' } });
    pro = await createAccount(t.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-tagged-'));
    // show-pdf-tags runs as nobody in a folder under this one.
    await chmod(dir, 0o755);
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const compiler of ['lualatex', 'pdflatex'] as const) {
    test(`${compiler} with ua-2: structure tree, /Lang, the figure's /Alt, H1/H2, TH cells, and a report whose checks all ran and passed`, async () => {
      const before = await used();
      const res = await compile({ latex: TAGGED, compiler, output: { pdf_standard: 'ua-2', metadata: META } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<{ pdf_url: string; conformance: Report; warnings: unknown[] }>();
      assert.deepEqual(body.conformance.standards, ['ua-2']);
      assert.deepEqual(body.conformance.checks.map((c) => c.id), ALL_UA_CHECKS);
      assert.deepEqual(body.conformance.violations, []);
      assert.deepEqual(body.conformance.validators, []);
      assert.equal(await used(), before + 1);

      const pdf = await fetchPdf(body.pdf_url);
      const root = catalog(pdf);
      assert.equal(root['/Lang'], 'u:en-GB');
      assert.match(String(root['/StructTreeRoot']), /^\d+ 0 R$/);
      assert.deepEqual(root['/MarkInfo'], { '/Marked': true });
      assert.match(xmp(pdf), /<pdfuaid:part>2<\/pdfuaid:part>/);
      assert.match(execFileSync('pdfinfo', ['-'], { input: pdf }).toString('utf8'), /^PDF version:\s+2\.0$/m);
      const tags = await showTags(pdf);
      assert.match(tags, /\/ H1 \(http:\/\/iso\.org\/pdf2\/ssn\)/);
      assert.match(tags, /\/ H2 \(http:\/\/iso\.org\/pdf2\/ssn\)/);
      assert.match(tags, /Figure \(http:\/\/iso\.org\/pdf2\/ssn\):\n[│ ]*┝━━Alternate text: A grey test image with the word Image\n/);
      assert.equal((tags.match(/─TH \(/g) ?? []).length, 2, tags);
      assert.match(tags, /Marked content on page 1: Item/);
    });
  }

  test('["a-2b","ua-1"]: PDF 1.7, pdfaid 2B and pdfuaid 1, the PDF/A checks pass too', async () => {
    const res = await compile({ latex: TAGGED, compiler: 'pdflatex', output: { pdf_standard: ['a-2b', 'ua-1'], metadata: META } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ pdf_url: string; conformance: Report }>();
    assert.deepEqual(body.conformance.standards, ['a-2b', 'ua-1']);
    assert.deepEqual(body.conformance.violations, []);
    const ids = body.conformance.checks.map((c) => c.id);
    for (const id of ['xmp_pdfaid', 'output_intent', 'not_encrypted', 'pdfa_fonts_embedded', 'xmp_pdfuaid', 'structure_tree_root']) assert.ok(ids.includes(id), `${id} in ${ids.join(',')}`);
    const pdf = await fetchPdf(body.pdf_url);
    const meta = xmp(pdf);
    assert.match(meta, /<pdfaid:part>2<\/pdfaid:part>/);
    assert.match(meta, /<pdfaid:conformance>B<\/pdfaid:conformance>/);
    assert.match(meta, /<pdfuaid:part>1<\/pdfuaid:part>/);
    assert.match(execFileSync('pdfinfo', ['-'], { input: pdf }).toString('utf8'), /^PDF version:\s+1\.7$/m);
    assert.ok(Array.isArray(catalog(pdf)['/OutputIntents']));
  });

  test('a tagged PDF whose figure has no alt text and whose table has no header row: delivered, the report names both', async () => {
    const latex = TAGGED.replace('\\tagpdfsetup{table/header-rows={1}}\n', '').replace('alt={A grey test image with the word Image},', '');
    const res = await compile({ latex, compiler: 'lualatex', output: { tagged: true, metadata: { lang: 'de-DE' } } });
    assert.equal(res.statusCode, 200, res.body);
    const report = res.json<{ conformance: Report }>().conformance;
    assert.deepEqual(report.standards, []);
    const failed = report.checks.filter((c) => !c.passed).map((c) => c.id);
    assert.deepEqual(failed, ['figures_alt', 'tables_header_cells']);
    assert.match(report.violations[0]!, /^figures_alt: 1 of 1 figure\(s\) have no \/Alt/);
  });

  test('a layout table marked presentation needs no header cells; a data table beside it still does', async () => {
    const doc = (dataTable: string) => [
      '\\documentclass{article}',
      '\\begin{document}',
      '\\section{Order}',
      '{\\tagpdfsetup{table/tagging=presentation}\\begin{tabular}{rl}Number & 2026-001\\\\ Date & 10 March\\\\\\end{tabular}}',
      '',
      dataTable,
      '\\end{document}',
      '',
    ].join('\n');
    const data = '\\begin{tabular}{ll}Item & Amount\\\\ Consulting & 1000\\\\\\end{tabular}';
    const check = async (latex: string) => {
      const res = await compile({ latex, compiler: 'pdflatex', output: { tagged: true, metadata: { lang: 'en-GB' } } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ conformance: Report }>().conformance.checks.find((c) => c.id === 'tables_header_cells')!;
    };
    assert.deepEqual(await check(doc(data)), {
      id: 'tables_header_cells',
      passed: false,
      detail: '1 of 1 table(s) have no header cell (TH) (and 1 layout table(s) marked presentation): say which rows are headers, e.g. \\tagpdfsetup{table/header-rows={1}}, or mark a table that only lays out text \\tagpdfsetup{table/tagging=presentation}',
    });
    assert.deepEqual(await check(doc(`{\\tagpdfsetup{table/header-rows={1}}${data}}`)), {
      id: 'tables_header_cells',
      passed: true,
      detail: '1 table(s), each with header cells (TH) (and 1 layout table(s) marked presentation)',
    });
  });

  test('a package that blocks tagging is named in warnings', async () => {
    const latex = TAGGED.replace('\\usepackage{graphicx}', '\\usepackage{graphicx}\n\\usepackage{listings}');
    const res = await compile({ latex, compiler: 'lualatex', output: { pdf_standard: 'ua-2', metadata: META } });
    assert.equal(res.statusCode, 200, res.body);
    const warnings = res.json<{ warnings: Array<{ type: string; symbol?: string; message: string }> }>().warnings.filter((w) => w.type === 'tagging_blocked');
    assert.deepEqual(warnings.map((w) => w.symbol), ['listings.sty']);
    assert.match(warnings[0]!.message, /currently incompatible with tagging/);
  });

  test('a tagged compile that fails: the hint names the blocking packages first', async () => {
    const latex = TAGGED.replace('\\usepackage{graphicx}', '\\usepackage{graphicx}\n\\usepackage{float}').replace('The figure shows the plan.', 'The figure shows \\undefinedcommand the plan.');
    const res = await compile({ latex, compiler: 'pdflatex', output: { tagged: true, metadata: { lang: 'en-GB' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'compilation_failed');
    assert.match(res.json().agent_hint, /^Tagging is on and these packages block it \(LaTeX tagging-status\): float\.sty \(currently incompatible with tagging\)\./);
  });

  test('refusals cost nothing: xelatex, no lang, unknown standard, incompatible combinations, own \\DocumentMetadata', async () => {
    const before = await used();
    const xe = await compile({ latex: TAGGED, compiler: 'xelatex', output: { pdf_standard: 'ua-2', metadata: META } });
    assert.equal(xe.statusCode, 422);
    assert.equal(xe.json().error, 'tagging_unsupported_engine');
    assert.deepEqual(xe.json().engines, ['lualatex', 'pdflatex']);
    assert.equal(xe.json().compiler, 'xelatex');
    const xeTagged = await compile({ latex: TAGGED, compiler: 'xelatex', output: { tagged: true } });
    assert.equal(xeTagged.json().error, 'tagging_unsupported_engine');

    const noLang = await compile({ latex: TAGGED, compiler: 'lualatex', output: { pdf_standard: 'ua-1', metadata: { title: 'x' } } });
    assert.equal(noLang.statusCode, 422);
    assert.equal(noLang.json().error, 'validation_failed');
    assert.deepEqual(noLang.json().fields.map((f: { field: string }) => f.field), ['output.metadata.lang']);

    const unknown = await compile({ latex: TAGGED, output: { pdf_standard: 'ua-3', metadata: META } });
    assert.equal(unknown.statusCode, 422);
    assert.equal(unknown.json().error, 'validation_failed');
    assert.ok(unknown.json().fields.some((f: { field: string }) => f.field.startsWith('output.pdf_standard')));

    for (const [combo, rule] of [[['a-2b', 'ua-2'], 'combination'], [['a-4f', 'ua-1'], 'combination'], [['a-2b', 'a-3b'], 'combination'], [['a-1b', 'ua-1'], 'combination']] as const) {
      const res = await compile({ latex: TAGGED, output: { pdf_standard: combo, metadata: META } });
      assert.equal(res.statusCode, 422, JSON.stringify(combo));
      assert.equal(res.json().error, 'validation_failed');
      assert.ok(res.json().fields.some((f: { field: string; rule: string }) => f.field === 'output.pdf_standard' && f.rule === rule), JSON.stringify(res.json().fields));
    }
    const own = await compile({ latex: `\\DocumentMetadata{lang=en}\n${TAGGED}`, output: { pdf_standard: 'ua-2', metadata: META } });
    assert.equal(own.statusCode, 422);
    assert.equal(own.json().fields[0].rule, 'document_metadata');
    assert.equal(await used(), before);
  });

  test('POST /api/v1/pdf/check: an untagged PDF fails the tagging checks by id; a tagged one passes; oversize is 413', async () => {
    const plain = await compile({ latex: HELLO });
    assert.equal(plain.statusCode, 200);
    const pdf = await fetchPdf(plain.json<{ pdf_url: string }>().pdf_url);
    const check = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/pdf/check', payload });
    const res = await check({ pdf_base64: pdf.toString('base64'), standards: ['ua-2'] });
    assert.equal(res.statusCode, 200, res.body);
    const report = res.json<{ pages: number; conformance: Report }>();
    assert.equal(report.pages, 1);
    const failed = report.conformance.checks.filter((c) => !c.passed).map((c) => c.id);
    for (const id of ['structure_tree_root', 'mark_info_marked', 'pages_struct_parents', 'lang', 'display_doc_title', 'xmp_pdfuaid']) assert.ok(failed.includes(id), `${id} in ${failed.join(',')}`);
    assert.ok(report.conformance.violations.includes('structure_tree_root: the catalog has no /StructTreeRoot: the PDF is not tagged'));

    const tagged = await compile({ latex: TAGGED, compiler: 'lualatex', output: { pdf_standard: 'ua-2', metadata: META } });
    const good = await check({ pdf_base64: (await fetchPdf(tagged.json<{ pdf_url: string }>().pdf_url)).toString('base64') });
    assert.equal(good.statusCode, 200);
    assert.deepEqual(good.json<{ conformance: Report }>().conformance.standards, ['ua-2']);
    assert.deepEqual(good.json<{ conformance: Report }>().conformance.violations, []);

    const big = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(1024 * 1024 + 10, 32)]);
    const over = await check({ pdf_base64: big.toString('base64') });
    assert.equal(over.statusCode, 413);
    assert.equal(over.json().error, 'pdf_check_too_large');
    assert.equal(over.json().limit, 1024 * 1024);
    const notPdf = await check({ pdf_base64: Buffer.from('hello').toString('base64') });
    assert.equal(notPdf.statusCode, 422);
    assert.equal(notPdf.json().error, 'validation_failed');
  });
});
