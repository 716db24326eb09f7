// Fonts as TeX Live ships them (issue 39): documents that use the fonts Debian moves out of
// TeX Live or leaves out compile through the service with those fonts embedded (pdffonts):
// ClearSans.sty with pdflatex (its regular weight's map line names a TrueType file Debian
// does not ship; the image build points it at the Type 1 twin), cantarell and cabin with
// pdflatex, and \setmainfont{Cantarell} / {Cabin} with xelatex (found by family name through
// fontconfig; xdvipdfmx cannot embed Debian's variable Cantarell, the image has static ones).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { texliveSettings } from '../../src/config.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const doc = (preamble: string, body = 'Regular, \\textbf{bold} and \\textit{italic} text.') =>
  `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`;

describe('fonts TeX Live ships, compiled in the service', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  before(async () => {
    // The image this machine serves (QUIRE_TEXLIVE_DIR, as setup built it).
    t = await testApp({ env: { QUIRE_TEXLIVE_DIR: texliveSettings().dir } });
    pro = await createAccount(t.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-fonts-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** pdffonts' lines for the compiled PDF: name, type, encoding, emb, sub, uni, object, generation. */
  async function fonts(latex: string, compiler: string): Promise<string[]> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex, compiler } });
    assert.equal(res.statusCode, 200, res.statusCode === 422 ? `${res.json().message}\n${(res.json().log as string).slice(-1500)}` : res.body.slice(0, 1500));
    const url = new URL(res.json().pdf_url as string);
    const pdf = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    assert.equal(pdf.statusCode, 200);
    const file = join(dir, `${compiler}-${Math.random().toString(36).slice(2)}.pdf`);
    await writeFile(file, pdf.rawPayload);
    return execFileSync('pdffonts', [file], { encoding: 'utf8' }).split('\n').slice(2).filter(Boolean);
  }

  function assertEmbedded(lines: string[], family: RegExp, atLeast: number) {
    const matching = lines.filter((line) => family.test(line.split(/\s+/)[0] ?? ''));
    assert.ok(matching.length >= atLeast, `${family}: ${lines.join('\n')}`);
    for (const line of matching) assert.match(line, /\syes\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+$/, `embedded: ${line}`);
  }

  test('ClearSans.sty with pdflatex: regular, bold and italic Clear Sans embedded', async () => {
    const lines = await fonts(doc('\\usepackage[T1]{fontenc}\n\\usepackage{ClearSans}\n\\renewcommand{\\familydefault}{\\sfdefault}'), 'pdflatex');
    assertEmbedded(lines, /\+ClearSans(-Bold|-Italic)?$/, 3);
    assert.ok(lines.some((line) => /\+ClearSans\s/.test(line)), `the regular weight: ${lines.join('\n')}`);
  });

  test('cantarell and cabin with pdflatex: their Type 1 fonts embedded', async () => {
    assertEmbedded(await fonts(doc('\\usepackage[T1]{fontenc}\n\\usepackage[default]{cantarell}'), 'pdflatex'), /\+Cantarell/, 2);
    assertEmbedded(await fonts(doc('\\usepackage[T1]{fontenc}\n\\usepackage[sfdefault]{cabin}'), 'pdflatex'), /\+Cabin/, 2);
  });

  test('\\setmainfont{Cantarell} (static fonts made from Debian’s variable one) and {Cabin} with xelatex: found by name', async () => {
    assertEmbedded(await fonts(doc('\\usepackage{fontspec}\n\\setmainfont{Cantarell}'), 'xelatex'), /\+Cantarell/, 1);
    assertEmbedded(await fonts(doc('\\usepackage{fontspec}\n\\setmainfont{Cabin}'), 'xelatex'), /\+Cabin/, 1);
  });
});
