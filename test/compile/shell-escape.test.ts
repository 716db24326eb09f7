// Documents that rely on TeX Live's restricted shell escape compile through the service as on
// any TeX Live: minted 3 (latexminted) and an EPS figure converted by repstopdf through
// \write18, on all three engines; a document that needs a program off the list gets SPEC's 422
// with a diagnosis naming the refused command. test/security/shell-escape.test.ts has the attacks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const ENGINES = ['pdflatex', 'xelatex', 'lualatex'] as const;
/** A 100×50 pt EPS whose only text, EPSFIG, shows in the PDF once it is converted. */
const EPS = Buffer.from(
  [
    '%!PS-Adobe-3.0 EPSF-3.0',
    '%%BoundingBox: 0 0 100 50',
    '%%EndComments',
    'newpath 10 10 moveto 90 10 lineto 90 40 lineto 10 40 lineto closepath 0.2 0.4 0.8 setrgbcolor fill',
    '0 0 0 setrgbcolor /Helvetica findfont 12 scalefont setfont 20 20 moveto (EPSFIG) show',
    'showpage',
    '%%EOF',
    '',
  ].join('\n'),
);

const MINTED = String.raw`\documentclass{article}
\usepackage{minted}
\begin{document}
Listing:
\begin{minted}{python}
def greet(name):
    return f"Hello {name}"
\end{minted}
Inline \mintinline{c}{int answer = 42;} done.
\end{document}
`;

// shellesc gives lualatex its \write18 (LuaTeX has none of its own), as on any TeX Live.
const CONVERT = (program: string) => String.raw`\documentclass{article}
\usepackage{graphicx,shellesc}
\immediate\write18{${program} fig.eps}
\begin{document}
Figure: \includegraphics{fig.pdf}
\end{document}
`;

describe('restricted shell escape through the service', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'business');
  });
  after(() => t.close());

  const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });
  async function pdfText(body: { pdf_url: string }): Promise<string> {
    const url = new URL(body.pdf_url);
    const res = await t.app.inject({ url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    return execFileSync('pdftotext', ['-', '-'], { input: res.rawPayload }).toString('utf8');
  }

  test('minted 3 highlights code with latexminted on every engine', async () => {
    for (const compiler of ENGINES) {
      const res = await compile({ latex: MINTED, compiler });
      assert.equal(res.statusCode, 200, `${compiler}: ${res.body.slice(0, 800)}`);
      const out = await pdfText(res.json());
      assert.match(out, /def greet\(name\):/, compiler);
      assert.match(out, /int answer = 42;/, compiler);
      // The first pass's placeholders were replaced on the second (runner.ts MINTED_BATCH).
      assert.doesNotMatch(out, /<MINTED>/, compiler);
    }
  });

  test('an EPS figure converted by repstopdf through \\write18 is in the PDF on every engine', async () => {
    for (const compiler of ENGINES) {
      const res = await compile({ latex: CONVERT('repstopdf'), compiler, assets: { 'fig.eps': EPS.toString('base64') } });
      assert.equal(res.statusCode, 200, `${compiler}: ${res.body.slice(0, 800)}`);
      assert.match(await pdfText(res.json()), /EPSFIG/, compiler);
    }
  });

  test('unrestricted epstopdf through \\write18: 422 with a diagnosis that names it and the fix', async () => {
    for (const compiler of ENGINES) {
      const res = await compile({ latex: CONVERT('epstopdf'), compiler, assets: { 'fig.eps': EPS.toString('base64') } });
      assert.equal(res.statusCode, 422, compiler);
      const body = res.json();
      assert.equal(body.error, 'compilation_failed');
      assert.equal(body.diagnosis.error_class, 'fatal_error');
      assert.equal(body.diagnosis.symbol, 'epstopdf fig.eps');
      assert.equal(body.diagnosis.line, 3);
      assert.match(body.diagnosis.summary, /^The document needs unrestricted shell escape: "epstopdf fig\.eps" on line 3 was refused\. Only TeX Live's restricted list \(.*repstopdf.*\) runs here\.$/);
      assert.match(body.diagnosis.suggested_fix, /^Change "epstopdf" to "repstopdf" on line 3/);
      assert.match(body.agent_hint, /repstopdf.*compile again\.$/);
    }
  });
});
