// The hardening (lualatex initialization, read-only sandbox root, safe reads, PDF scan) must
// not break what worked before: fontspec with a system font under lualatex and xelatex,
// biblatex + biber with makeindex under lualatex, and LuaTeX-ja (which probes its cache files
// with os.rename), through the HTTP compile route.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

describe('ordinary documents under the hardened sandbox', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'business');
  });
  after(() => t.close());

  async function compile(latex: string, compiler: string) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, compiler }, headers: account.headers });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }

  async function pdfText(body: Record<string, unknown>): Promise<string> {
    const url = new URL(String(body.pdf_url));
    const res = await t.app.inject({ url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    return execFileSync('pdftotext', ['-', '-'], { input: res.rawPayload }).toString('utf8');
  }

  test('fontspec with a system font, biblatex+biber and makeindex still compile', async () => {
    const fontspec = '\\documentclass{article}\n\\usepackage{fontspec}\n\\setmainfont{DejaVu Serif}\n\\begin{document}\nFontspec säys héllo.\n\\end{document}\n';
    for (const compiler of ['lualatex', 'xelatex']) {
      const { status, body } = await compile(fontspec, compiler);
      assert.equal(status, 200, `${compiler}: ${JSON.stringify(body).slice(0, 400)}`);
      assert.match(await pdfText(body), /Fontspec säys héllo\./);
    }
    const biber = String.raw`\begin{filecontents*}[overwrite]{refs.bib}
@book{knuth, author = {Donald E. Knuth}, title = {The TeXbook}, year = {1984}, publisher = {Addison-Wesley}}
\end{filecontents*}
\documentclass{article}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\usepackage{makeidx}
\makeindex
\begin{document}
As shown in \cite{knuth}. Zebras\index{zebra} and aardvarks\index{aardvark}.
\printbibliography
\printindex
\end{document}
`;
    // pdflatex runs the same helpers in test/tex/runner.test.ts.
    for (const compiler of ['lualatex']) {
      const { status, body } = await compile(biber, compiler);
      assert.equal(status, 200, `${compiler}: ${JSON.stringify(body).slice(0, 400)}`);
      const text = await pdfText(body);
      assert.match(text, /As shown in \[1\]\./);
      assert.match(text, /The TeXbook/);
      assert.match(text, /aardvark, 1/);
    }
  });

  test('a LuaTeX-ja document compiles: its cache check os.rename(name, name) still answers', async () => {
    const ja = '\\documentclass{ltjsarticle}\n\\begin{document}\n日本語の文書です。\n\\end{document}\n';
    const { status, body } = await compile(ja, 'lualatex');
    assert.equal(status, 200, JSON.stringify(body).slice(0, 400));
    assert.match((await pdfText(body)).replace(/\s+/g, ''), /日本語の文書です。/);
  });
});
