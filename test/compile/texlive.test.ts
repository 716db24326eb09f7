// The TeX Live year of a compile (issue 22): each installed image compiles hello with every
// engine and a biber document; a year the server does not serve is 422 texlive_not_available
// and costs nothing; /health lists the images. QUIRE_TEXLIVE here names every year, so the
// test covers whichever images this machine has built (CI: at least the default, 2026).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { texliveSettings } from '../../src/config.js';
import { installedImages } from '../../src/tex/image/store.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const ALL = '2026,2024,2022';
const installed = installedImages(texliveSettings({ QUIRE_TEXLIVE: ALL }).dir).map((image) => image.year);

const BIBER = String.raw`\documentclass{article}
\usepackage[backend=biber]{biblatex}
\begin{filecontents*}[overwrite]{refs.bib}
@book{knuth, author={Donald E. Knuth}, title={The {\TeX}book}, year={1984}, publisher={Addison-Wesley}}
\end{filecontents*}
\addbibresource{refs.bib}
\begin{document}Cited \cite{knuth}.\printbibliography\end{document}
`;

describe('TeX Live years', () => {
  let t: TestApp;
  let pro: TestAccount;
  before(async () => {
    t = await testApp({ env: { QUIRE_TEXLIVE: ALL } });
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  test('the default image is built, and /health lists every served image newest first', async () => {
    assert.ok(installed.includes('2026'), 'setup builds the default image (2026)');
    const body = (await t.app.inject({ url: '/health' })).json();
    assert.deepEqual(body.texlive.map((image: { year: string }) => image.year), installed);
    assert.equal(body.texlive[0].default, true);
    for (const image of body.texlive) {
      assert.match(image.debian, /^(forky|trixie|bookworm) \d{4}\.\d{8}/);
      assert.match(image.engines.pdflatex, /^pdfTeX 3\.141592653-2\.6-1\.40\.\d+ \(TeX Live (\d{4})/);
      // Debian trixie's TeX Live 2024.20250309 runs binaries from the 2025 pretest: they call themselves "TeX Live 2025/dev".
      const said = Number(/\(TeX Live (\d{4})/.exec(image.engines.pdflatex)?.[1]);
      assert.ok(said === Number(image.year) || (image.year === '2024' && said === 2025), `${image.year}: ${image.engines.pdflatex}`);
      assert.match(image.engines.xelatex, /^XeTeX/);
      assert.match(image.engines.lualatex, /^This is LuaHBTeX/);
      assert.ok(image.disk_bytes > 1e9);
    }
  });

  for (const year of installed) {
    test(`TeX Live ${year}: hello with each engine and a biber document`, async () => {
      for (const compiler of ['pdflatex', 'xelatex', 'lualatex']) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, compiler, texlive: year } });
        assert.equal(res.statusCode, 200, `${year} ${compiler}: ${res.body.slice(0, 500)}`);
        assert.equal(res.json().texlive, year);
        assert.equal(res.json().pages, 1);
      }
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: BIBER, texlive: year } });
      assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
      assert.equal(res.json().texlive, year);
    });
  }

  test('no year: the newest installed runs, and a failure says so too', async () => {
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO } });
    assert.equal(ok.json().texlive, installed[0]);
    const failed = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: '\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}' } });
    assert.equal(failed.statusCode, 422);
    assert.equal(failed.json().error, 'compilation_failed');
    assert.equal(failed.json().texlive, installed[0]);
  });

  test('a year not served is 422 texlive_not_available listing the served ones; nothing charged', async () => {
    const account = await createAccount(t.services, 'free');
    for (const texlive of ['2025', 2026, '', 'latest']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: account.headers, payload: { latex: HELLO, texlive } });
      assert.equal(res.statusCode, 422, String(texlive));
      assert.deepEqual(
        { error: res.json().error, texlive: res.json().texlive, available: res.json().available },
        { error: 'texlive_not_available', texlive, available: installed },
      );
    }
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
    assert.equal(usage.usage.used_this_month, 0);
  });

  test('an installed year that QUIRE_TEXLIVE leaves out is not served', async () => {
    const narrow = await testApp({ env: { QUIRE_TEXLIVE: '2026' } });
    try {
      const account = await createAccount(narrow.services, 'pro');
      const res = await narrow.app.inject({ method: 'POST', url: '/api/v1/compile', headers: account.headers, payload: { latex: HELLO, texlive: '2022' } });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'texlive_not_available');
      assert.deepEqual(res.json().available, ['2026']);
    } finally {
      await narrow.close();
    }
  });
});
