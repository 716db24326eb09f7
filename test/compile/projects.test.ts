// Multi-file projects (`files`) and warnings on success, both extensions of SPEC 1.5.0,
// through the real HTTP route and the MCP compile tool with real TeX: validation errors with
// their exact codes, the names authors give their files (main.bib, chap.01.intro.tex), a .bib
// named but not sent and a glyph the font lacks as warnings on the PDF, and the warnings' content.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'projects');
const fixture = (path: string) => readFile(join(FIXTURES, path), 'utf8');

describe('compile with files and warnings', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const compile = (payload: object, headers: Record<string, string> = account.headers) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers });

  test('a chapter file and a .bib through bibtex: 200 with the pages latexmk gives and no warnings', async () => {
    const res = await compile({
      latex: await fixture('projbibtex/main.tex'),
      files: { 'chapters/intro.tex': await fixture('projbibtex/chapters/intro.tex'), 'refs.bib': await fixture('projbibtex/refs.bib') },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.pages, 4);
    assert.deepEqual(body.warnings, []);
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
    assert.equal(usage.usage.used_this_month, 1);
  });

  test('warnings: undefined reference and citation, and an empty pdflatex font slot, with lines and fixes', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\nSee \\ref{nowhere}.\nAnd \\cite{nobody}.\nA\\symbol{200}.\n\\end{document}\n';
    const res = await compile({ latex });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(
      body.warnings.map((w: { type: string; line?: number }) => [w.type, w.line]),
      [
        ['undefined_reference', 3],
        ['undefined_citation', 4],
        ['missing_glyph', undefined],
      ],
    );
    assert.equal(body.warnings[2].message, 'The font cmr10 has no character in slot 200 (0xC8); pdflatex left it out of the PDF.');
    for (const w of body.warnings) assert.ok(w.fix.length > 10);
  });

  test('anonymous callers get warnings too; a plain document has none', async () => {
    const res = await compile({ latex: HELLO }, { 'x-forwarded-for': '203.0.113.77' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().warnings, []);
  });

  for (const [tool, latex] of [
    ['biber', '\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}\n\\begin{document}\n\\cite{knuth}\n\\printbibliography\n\\end{document}\n'],
    ['bibtex', '\\documentclass{article}\n\\begin{document}\n\\cite{knuth}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n'],
  ] as const) {
    test(`a .bib named but not sent (${tool}): the PDF, as latexmk gives it, with a missing_file warning naming the file and its line`, async () => {
      const res = await compile({ latex });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.pages, 1);
      const missing = body.warnings.find((w: { type: string }) => w.type === 'missing_file');
      assert.deepEqual(
        { ...missing, fix: undefined },
        { type: 'missing_file', message: `${tool} cannot find the bibliography database "refs.bib": the citations print as [?].`, line: tool === 'biber' ? 3 : 5, symbol: 'refs.bib', fix: undefined },
      );
      assert.match(missing.fix, /Send "refs\.bib" in "files"/);
      assert.ok(body.warnings.some((w: { type: string; message: string }) => w.type === 'undefined_citation' && w.message.includes('"knuth"')), res.body);
    });
  }

  test('xelatex delivers a glyph its font lacks with a missing_glyph warning naming the real codepoint and its line', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\nSnow \u2603.\n\\end{document}\n';
    const res = await compile({ latex, compiler: 'xelatex' });
    assert.equal(res.statusCode, 200, res.body);
    const [warning] = res.json().warnings;
    assert.equal(warning.type, 'missing_glyph');
    assert.equal(warning.symbol, 'U+2603');
    assert.equal(warning.line, 3);
    assert.match(warning.message, /no glyph for \u2603 \(U\+2603\)/);
  });

  test('a xeCJK document with a character its font (Fandol) lacks: the PDF with a missing_glyph warning', async () => {
    const latex = '\\documentclass{article}\n\\usepackage{xeCJK}\n\\begin{document}\n中文文本。\n罕见字\u{2A6A5}。\n\\end{document}\n';
    const res = await compile({ latex, compiler: 'xelatex' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.pages, 1);
    const warning = body.warnings.find((w: { type: string }) => w.type === 'missing_glyph');
    assert.equal(warning?.symbol, 'U+2A6A5', res.body);
    assert.equal(warning.line, 5);
  });

  test('project files as authors name them: main.bib, main.xmpdata (read by pdfx), chap.01.intro.tex, plot.v2.pdf compile as with latexmk', async () => {
    const res = await compile({
      latex: await fixture('authornames/main.tex'),
      files: {
        'main.bib': await fixture('authornames/main.bib'),
        'main.xmpdata': await fixture('authornames/main.xmpdata'),
        'chapters/chap.01.intro.tex': await fixture('authornames/chapters/chap.01.intro.tex'),
        'figures/plot.v2.pdf': { base64: (await readFile(join(FIXTURES, 'authornames/figures/plot.v2.pdf'))).toString('base64') },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    // latexmk -pdf on the same folder in the same image: 1 page, no warnings.
    assert.equal(body.pages, 1);
    assert.deepEqual(body.warnings, []);
    const pdf = await t.app.inject({ url: new URL(body.pdf_url).pathname + new URL(body.pdf_url).search });
    assert.equal(pdf.statusCode, 200);
    // pdfx wrote main.xmpdata's title into the XMP packet.
    assert.ok(pdf.rawPayload.includes(Buffer.from('Names as authors write them')), 'the XMP carries the title of main.xmpdata');
  });

  // A harmless error TeX recovers from (an undefined command), after a chapter file.
  const RECOVERABLE = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/one}\nText \\undefinedmacro after it.\n\\end{document}\n';
  const CHAPTER = { 'chapters/one.tex': 'Chapter one.\n' };

  test('on_error "continue": a recoverable error gives 200, the PDF and its errors with file and line, charged', async () => {
    const before = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage.used_this_month;
    const res = await compile({ latex: RECOVERABLE, files: CHAPTER, on_error: 'continue' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.pages, 1);
    assert.deepEqual(body.errors, [{ message: 'Undefined control sequence.', file: 'main.tex', line: 4 }]);
    assert.deepEqual(body.warnings, []);
    const pdf = await t.app.inject({ url: new URL(body.pdf_url).pathname + new URL(body.pdf_url).search });
    assert.equal(pdf.statusCode, 200);
    const after = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage.used_this_month;
    assert.equal(after, before + 1);
  });

  test('without on_error (or "stop") the same document is SPEC\'s 422 with a diagnosis, not charged', async () => {
    for (const extra of [{}, { on_error: 'stop' }]) {
      const res = await compile({ latex: RECOVERABLE, files: CHAPTER, ...extra });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.equal(body.error, 'compilation_failed');
      assert.equal(body.diagnosis.error_class, 'undefined_command');
      assert.equal(body.diagnosis.symbol, '\\undefinedmacro');
    }
  });

  test('on_error "continue" on a document that compiles: errors is empty; on one TeX cannot finish: still 422', async () => {
    const ok = await compile({ latex: HELLO, on_error: 'continue' });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json().errors, []);
    const plain = await compile({ latex: HELLO });
    assert.equal(plain.json().errors, undefined);
    const fatal = await compile({ latex: '\\documentclass{article}\n\\usepackage{nosuchpackagehere}\n\\begin{document}\nx\n\\end{document}\n', on_error: 'continue' });
    assert.equal(fatal.statusCode, 422, fatal.body);
    assert.equal(fatal.json().diagnosis.error_class, 'missing_package');
  });

  for (const compiler of ['xelatex', 'lualatex'] as const) {
    test(`on_error "continue" with ${compiler}: 200 with the PDF and the error`, async () => {
      const res = await compile({ latex: RECOVERABLE, files: CHAPTER, on_error: 'continue', compiler });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().pages, 1);
      assert.deepEqual(res.json().errors, [{ message: 'Undefined control sequence.', file: 'main.tex', line: 4 }]);
    });
  }

  test('on_error must be "stop" or "continue": 422 validation_failed', async () => {
    const res = await compile({ latex: HELLO, on_error: 'nonstop' });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'validation_failed');
    assert.equal(res.json().fields[0].field, 'on_error');
  });

  const bad: Array<[string, unknown, number, string, Record<string, unknown>]> = [
    ['traversal', { '../x.tex': 'x' }, 422, 'invalid_asset_filename', { file: '../x.tex' }],
    ['absolute path', { '/etc/x': 'x' }, 422, 'invalid_asset_filename', { file: '/etc/x' }],
    ['traversal in a file that would be skipped', { '../LICENSE': 'x' }, 422, 'invalid_asset_filename', { file: '../LICENSE' }],
    ['seventeen folder levels', { 'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/f.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/f.tex', limit: 16 }],
    ['backslash', { 'a\\b.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'a\\b.tex' }],
    ['a control character', { 'chap\u0007ter.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'chap\u0007ter.tex' }],
    ['a line feed', { 'a\nb.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'a\nb.tex' }],
    ['a bidirectional override', { 'evil\u202Excod.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'evil\u202Excod.tex' }],
    ['main.pdf is the result', { 'main.pdf': { base64: 'JVBERi0=' } }, 422, 'invalid_asset_filename', { file: 'main.pdf', reason: 'reserved' }],
    ['main.log is the transcript', { 'main.log': 'x' }, 422, 'invalid_asset_filename', { file: 'main.log', reason: 'reserved' }],
    ['main.aux is the job\'s', { 'main.aux': 'x' }, 422, 'invalid_asset_filename', { file: 'main.aux', reason: 'reserved' }],
    ['main.tex is the latex field', { 'main.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'main.tex', reason: 'reserved' }],
    ['the output step\'s folder', { 'main.attachments/a.tex': 'x' }, 422, 'invalid_asset_filename', { file: 'main.attachments/a.tex', reason: 'reserved' }],
    ['a name part over 255 bytes', { [`${'a'.repeat(256)}.tex`]: 'x' }, 422, 'invalid_asset_filename', { file: `${'a'.repeat(256)}.tex`, limit: 255 }],
    ['same name in other case', { 'A.tex': 'x', 'a.tex': 'y' }, 422, 'invalid_asset_filename', { file: 'a.tex' }],
    ['image extension', { 'logo.png': 'x' }, 422, 'invalid_asset_format', { file: 'logo.png' }],
    ['a non-asset type as base64', { 'run.sh': { base64: 'eA==' } }, 422, 'invalid_asset_format', { file: 'run.sh' }],
    ['not an object', ['x.tex'], 422, 'validation_failed', { fields: [{ field: 'files', rule: 'type', message: 'must be an object mapping file paths to text or {"base64": "…"}' }] }],
    ['value not text', { 'x.tex': 5 }, 422, 'validation_failed', { fields: [{ field: 'files.x.tex', rule: 'type', message: 'must be a string (the file\'s UTF-8 text) or {"base64": "…"} for a binary file' }] }],
  ];
  for (const [label, files, status, code, details] of bad) {
    test(`files: ${label} → ${status} ${code}`, async () => {
      const res = await compile({ latex: HELLO, files });
      assert.equal(res.statusCode, status, res.body);
      const body = res.json();
      assert.equal(body.error, code);
      for (const [key, value] of Object.entries(details)) assert.deepEqual(body[key], value, key);
    });
  }

  test('what a compile has no use for is skipped, as in a project_zip: LICENSE, latexmkrc, dotfiles, dot folders', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/one}\n\\end{document}\n';
    const files = { LICENSE: 'MIT', latexmkrc: '$pdf_mode = 1;', '.gitignore': '*.aux', '.git/config': '[core]', '.hidden.tex': '\\undefinedmacro', 'chapters/one.tex': 'Chapter one.' };
    const res = await compile({ latex, files });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().pages, 1);
  });

  test('more than 200 files → 422 validation_failed', async () => {
    const files = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`f${i}.tex`, '']));
    const res = await compile({ latex: HELLO, files });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'validation_failed');
    assert.equal(res.json().fields[0].rule, 'maxProperties');
  });

  test('files count toward the source limit: anonymous 30 KB over latex and files together → 413', async () => {
    const files = { 'big.tex': 'x'.repeat(30 * 1024) };
    const res = await compile({ latex: HELLO, files }, { 'x-forwarded-for': '203.0.113.78' });
    assert.equal(res.statusCode, 413, res.body);
    const body = res.json();
    assert.equal(body.error, 'latex_too_large');
    assert.equal(body.size_bytes, Buffer.byteLength(HELLO) + 30 * 1024);
    assert.equal(body.limit, 30 * 1024);
    assert.match(body.message, /latex and files together/);
  });

  test('files over the plan limit become a size preview for an account, like the source alone', async () => {
    const free = await createAccount(t.services, 'free');
    const padding = '%'.repeat(1000) + '\n';
    const files = { 'pad.tex': padding.repeat(60) };
    const res = await compile({ latex: HELLO.replace('Hello', '\\input{pad}Hello'), files }, free.headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().preview, true);
    assert.match(res.json().warning, /the source is \d+ bytes/);
  });

  test('the MCP compile tool takes files and returns warnings', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/part}\n\\end{document}\n';
    const payload = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'compile', arguments: { latex, files: { 'chapters/part.tex': 'Part text, see \\ref{gone}.\n' } } },
    };
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      payload,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...account.headers },
    });
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json().result;
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(result.structuredContent.pages, 1);
    assert.deepEqual(
      result.structuredContent.warnings.map((w: { type: string; line: number }) => [w.type, w.line]),
      [['undefined_reference', 1]],
    );
    assert.match(result.content[0].text, /The reference "gone" points to no \\label\./);
  });
});
