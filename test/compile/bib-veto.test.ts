// bibtex runs as latexmk runs it (src/tex/project/bib-veto.ts): only when every database the .aux
// names is there, in the project or in the TeX tree. Found by the real-project corpus: a
// REVTeX paper whose references.bib is not in its repository is one page under latexmk and
// was two here (bibtex, run anyway, printed REVTeX's footnote entries as a bibliography); an
// arXiv-style project that ships main.bbl and no .bib lost its bibliography the same way.
// Real TeX, real sandbox, through the HTTP route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

type Warning = { type: string; message: string; symbol?: string };

describe('bibtex only when its databases are all there, as latexmk', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });
  const cites = (keys: string, databases: string) =>
    `\\documentclass{article}\n\\begin{document}\n\\cite{${keys}}\n\\bibliographystyle{plain}\n\\bibliography{${databases}}\n\\end{document}\n`;

  test('a shipped main.bbl and no .bib (arXiv sources): the shipped bibliography is used, the absent .bib is a warning', async () => {
    const bbl = '\\begin{thebibliography}{1}\n\\bibitem{knuth}\nD.~E. Knuth.\n\\newblock {\\em The \\TeX book}.\n\\newblock Addison-Wesley, 1984.\n\\end{thebibliography}\n';
    const res = await compile({ latex: cites('knuth', 'refs'), files: { 'main.bbl': bbl } });
    assert.equal(res.statusCode, 200, res.body);
    const warnings = res.json().warnings as Warning[];
    // bibtex run anyway would have rewritten main.bbl without knuth: "knuth" undefined.
    assert.deepEqual(warnings.filter((w) => w.type === 'undefined_citation'), [], res.body);
    assert.deepEqual(warnings.filter((w) => w.type === 'missing_file').map((w) => w.symbol), ['refs.bib']);
  });

  test('a database of the TeX tree (xampl.bib) is found: bibtex runs and the citation is defined', async () => {
    const res = await compile({ latex: cites('article-full', 'xampl') });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().warnings, []);
  });

  test('one database of two absent: no bibtex at all, as latexmk, the present one cited as [?] and the absent one named', async () => {
    const refs = '@book{knuth, author = {Donald E. Knuth}, title = {The TeXbook}, publisher = {Addison-Wesley}, year = {1984}}\n';
    const res = await compile({ latex: cites('knuth', 'refs,other'), files: { 'refs.bib': refs } });
    assert.equal(res.statusCode, 200, res.body);
    const warnings = res.json().warnings as Warning[];
    assert.deepEqual(warnings.filter((w) => w.type === 'missing_file').map((w) => w.symbol), ['other.bib']);
    assert.ok(warnings.some((w) => w.type === 'undefined_citation' && w.message.includes('"knuth"')), res.body);
  });

  test('every database sent: bibtex runs and nothing is missing', async () => {
    const refs = '@book{knuth, author = {Donald E. Knuth}, title = {The TeXbook}, publisher = {Addison-Wesley}, year = {1984}}\n';
    const res = await compile({ latex: cites('knuth', 'refs'), files: { 'refs.bib': refs } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().warnings, []);
  });
});
