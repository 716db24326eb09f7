// A delivered PDF carries no active content: real TeX documents (pdflatex, xelatex, lualatex)
// that put JavaScript actions, Launch actions and javascript: URIs into their PDF, in plain,
// name-escaped (/Java#53cript) and string-escaped (octal, hex) spellings, are refused with
// 422 pdf_active_content; ordinary links pass; a PDF qpdf reads with a warning is measured.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { activeContent, SCAN_PATTERN } from '../../src/tex/pdf/pdfcheck.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const doc = (body: string, preamble = '') => `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`;
/** A 10pt link annotation holding `action` (a PDF dictionary), written by pdfTeX. */
const pdfAnnot = (action: string) => `Click \\pdfannot width 10pt height 10pt depth 0pt {\\detokenize{/Subtype /Link /A ${action}}}`;

describe('PDF hygiene', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'business');
  });
  after(() => t.close());

  async function compile(latex: string, compiler = 'pdflatex') {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, compiler }, headers: account.headers });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }

  async function refused(latex: string, found: RegExp, compiler = 'pdflatex') {
    const { status, body } = await compile(latex, compiler);
    assert.equal(status, 422, JSON.stringify(body).slice(0, 600));
    assert.equal(body.error, 'pdf_active_content');
    assert.match(String(body.message), /^The PDF carries active content and was not delivered: /);
    assert.match(String(body.found), found);
    assert.equal(body.retryable, false);
    assert.equal(body.pdf_url, undefined);
  }

  test('a JavaScript open action (pdflatex) is refused', async () => {
    await refused(doc('x', '\\pdfcatalog{\\detokenize{/OpenAction << /S /JavaScript /JS (app.alert(1)) >>}}'), /JavaScript action/);
  });

  test('a name-escaped /Java#53cript additional action is refused', async () => {
    await refused(doc('x', '\\pdfcatalog{/AA << /WC << /S /Java\\string#53cript /JS (app.alert) >> >>}'), /JavaScript action/);
  });

  test('a document-level /Names /JavaScript tree is refused', async () => {
    const latex = doc(
      '\\immediate\\pdfobj{\\detokenize{<< /S /JavaScript /JS (app.alert(1)) >>}}\\edef\\js{\\the\\pdflastobj}' +
        '\\pdfnames{/JavaScript << /Names [(x) \\js\\space 0 R] >>} x',
    );
    await refused(latex, /document JavaScript \(\/Names \/JavaScript\)/);
  });

  test('javascript: URIs are refused in octal, hex and hyperref spellings', async () => {
    await refused(doc(pdfAnnot('<< /S /URI /URI (\\152avascript:alert(1)) >>')), /script URI \("javascript:alert\(1\)"\)/);
    await refused(doc(pdfAnnot('<< /S /URI /URI <6a617661736372697074 3a616c657274283129> >>')), /script URI \("javascript:alert\(1\)"\)/);
    await refused(doc('\\href{JavaScript:alert(1)}{click}', '\\usepackage{hyperref}'), /script URI \("JavaScript:alert\(1\)"\)/);
    // Behind byte order marks qpdf also reads (UTF-16LE, UTF-8); an odd UTF-16 byte once threw.
    const le = Buffer.from('javascript:alert(1)', 'utf16le').toString('hex');
    await refused(doc(pdfAnnot(`<< /S /URI /URI <fffe${le}> >>`)), /script URI \("javascript:alert\(1\)"\)/);
    await refused(doc(pdfAnnot(`<< /S /URI /URI <efbbbf${Buffer.from('javascript:alert(1)').toString('hex')}> >>`)), /script URI \("javascript:alert\(1\)"\)/);
    await refused(doc(pdfAnnot(`<< /S /URI /URI <feff${Buffer.from(le, 'hex').swap16().toString('hex')}00> >>`)), /script URI \("javascript:alert\(1\)"\)/);
  });

  test('a Launch action is refused (pdflatex, and xelatex through \\special)', async () => {
    await refused(doc(pdfAnnot('<< /S /Launch /F (calc.exe) >>')), /Launch action/);
    await refused(
      doc('\\special{pdf:ann width 10pt height 10pt << /Type /Annot /Subtype /Link /A << /S /Launch /F (calc.exe) >> >>} x'),
      /Launch action/,
      'xelatex',
    );
  });

  test('lualatex JavaScript through \\pdfextension is refused', async () => {
    await refused(
      doc('\\pdfextension annot width 10pt height 10pt depth 0pt {/Subtype /Link /A << /S /JavaScript /JS (app.alert(1)) >>} x'),
      /JavaScript action/,
      'lualatex',
    );
  });

  test('ordinary hyperref links, mailto and internal references pass', async () => {
    const latex = doc(
      '\\section{One}\\label{one}See \\href{https://example.com/a?b=c}{the site}, \\url{http://example.org}, ' +
        '\\href{mailto:someone@example.com}{mail} and section~\\ref{one}.',
      '\\usepackage{hyperref}',
    );
    for (const compiler of ['pdflatex', 'lualatex']) {
      const { status, body } = await compile(latex, compiler);
      assert.equal(status, 200, `${compiler}: ${JSON.stringify(body).slice(0, 400)}`);
      assert.equal(body.pages, 1);
    }
  });

  test('a PDF qpdf reads with a warning (exit status 3) is measured, not pdf_size_unknown', async () => {
    // A duplicated catalog key: qpdf warns ("dictionary has duplicated key") and exits 3.
    const { status, body } = await compile(doc('Hello, slightly damaged.', '\\pdfcatalog{/PageMode /UseNone /PageMode /UseOutlines}'));
    assert.equal(status, 200, JSON.stringify(body).slice(0, 400));
    assert.equal(body.pages, 1);
  });

  test('the scan of qpdf JSON reads strings as a viewer would', () => {
    const utf16 = `"b:feff${Buffer.from('javascript:x', 'utf16le').swap16().toString('hex')}"`;
    assert.deepEqual(activeContent(`"/URI": ${utf16}`), ['script URI ("javascript:x")']);
    assert.deepEqual(activeContent('"/URI": "u: java\\tscript:x"').length, 1);
    assert.deepEqual(activeContent('"/URI": "u:https://example.com/javascript:"'), []);
    assert.deepEqual(activeContent('"/S": "u:/JavaScript"'), [], 'a string is not a name');
    assert.deepEqual(activeContent('"/s": "/launch"\n"/S": "/GoTo"'), ['Launch action (/S /Launch)']);
  });

  test('the scan pattern finds every entry grep is given, whatever the layout', () => {
    const json = '{"/S": "/JavaScript", "/JS": "u:app.alert(\\"x\\")", "/URI": "u:a \\"/S\\": \\"/Launch\\""}';
    const scan = execFileSync('grep', ['-E', '-i', '-o', SCAN_PATTERN], { input: json }).toString('utf8');
    assert.deepEqual(activeContent(scan), ['JavaScript action (/S /JavaScript)', 'JavaScript code (/JS)']);
  });
});
