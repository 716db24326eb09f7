// The pass loop's planning on its own (no TeX): which helper calls a transcript, a recorder
// and an .aux lead to, and that names and options a document controls never become
// arguments that read or write outside the workspace or pass for options.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { judgeHelper, planHelpers, type ReadFile } from '../../src/tex/passes.js';

function reader(files: Record<string, string>): ReadFile {
  return async (name) => (name in files ? Buffer.from(files[name]!) : null);
}

const plan = (files: Record<string, string>, log = '', sources: string[] = []) => {
  const fls = Object.keys(files).map((name) => `OUTPUT ${name}`).join('\n');
  return planHelpers('main', { read: reader(files), log, fls, sources, done: new Map() });
};

describe('planHelpers', () => {
  test('every index file gets makeindex into its own .ind; names TeX may not use are skipped', async () => {
    const helpers = await plan({ 'main.idx': 'x', 'authors.idx': 'y', '-o.idx': 'z', '../up.idx': 'w', 'a/b/c.idx': 'v' });
    assert.deepEqual(
      helpers.map((h) => h.argv.join(' ')),
      [
        'env openin_any=r makeindex -t main.ilg -o main.ind main.idx',
        'env openin_any=r makeindex -t authors.ilg -o authors.ind authors.idx',
      ],
    );
  });

  test('imakeidx options: a plain style file and flags are used; anything else is dropped', async () => {
    const log = [
      "Package imakeidx Warning: Remember to run pdflatex again after calling\n(imakeidx)                `makeindex -s mystyle.ist -l authors.idx'.",
      "Package imakeidx Warning: Remember to run pdflatex again after calling\n(imakeidx)                `makeindex -o /etc/passwd places.idx'.",
      "Package imakeidx Warning: Remember to run pdflatex again after calling\n(imakeidx)                `makeindex -s /abs/x.ist main.idx'.",
    ].join('\n');
    const helpers = await plan({ 'main.idx': 'x', 'authors.idx': 'y', 'places.idx': 'z' }, log);
    assert.deepEqual(
      helpers.map((h) => h.argv.slice(3).join(' ')),
      ['-t main.ilg -o main.ind main.idx', '-s mystyle.ist -l -t authors.ilg -o authors.ind authors.idx', '-t places.ilg -o places.ind places.idx'],
    );
  });

  test('glossaries read from the .aux as makeglossaries reads it; an absolute style is refused', async () => {
    const aux = '\\@newglossary{main}{glg}{gls}{glo}\n\\@newglossary{acronym}{alg}{acr}{acn}\n\\@istfilename{main.ist}\n\\@glsorder{letter}\n';
    const helpers = await plan({ 'main.aux': aux, 'main.glo': 'g', 'main.acn': 'a' });
    assert.deepEqual(
      helpers.map((h) => h.argv.slice(3).join(' ')),
      ['-l -s main.ist -t main.glg -o main.gls main.glo', '-l -s main.ist -t main.alg -o main.acr main.acn'],
    );
    const hostile = await plan({ 'main.aux': aux.replace('main.ist', '/etc/passwd'), 'main.glo': 'g' });
    assert.deepEqual(hostile, []);
  });

  test('nomencl, index.sty\'s \\newindex and splitidx', async () => {
    const helpers = await plan(
      { 'main.nlo': 'n', 'main.adx': 'a', 'main.idx': 'i' },
      'Using splitted index at main.idx\n',
      ['\\newindex{aut}{adx}{and}{Name Index}'],
    );
    assert.deepEqual(
      helpers.map((h) => h.argv.join(' ')),
      [
        'env openin_any=r makeindex -t main.ilg -o main.and main.adx',
        'env openin_any=r splitindex -m makeindex main.idx',
        'env openin_any=r makeindex -s nomencl.ist -t main.nlg -o main.nls main.nlo',
      ],
    );
  });

  test('a helper runs again only when its input changed', async () => {
    const done = new Map<string, string>();
    const files: Record<string, string> = { 'main.idx': 'x' };
    const fls = 'OUTPUT main.idx';
    const first = await planHelpers('main', { read: reader(files), log: '', fls, sources: [], done });
    const same = await planHelpers('main', { read: reader(files), log: '', fls, sources: [], done });
    files['main.idx'] = 'changed';
    const changed = await planHelpers('main', { read: reader(files), log: '', fls, sources: [], done });
    assert.deepEqual([first.length, same.length, changed.length], [1, 0, 1]);
  });

  test('bibtex on each .aux with \\bibdata, keyed by the citations of every .aux', async () => {
    const done = new Map<string, string>();
    const files: Record<string, string> = { 'main.aux': '\\bibdata{refs}\n\\bibstyle{plain}\n', 'chapters/intro.aux': '\\citation{knuth}\n' };
    const fls = 'OUTPUT main.aux\nOUTPUT chapters/intro.aux';
    const first = await planHelpers('main', { read: reader(files), log: '', fls, sources: [], done });
    assert.deepEqual(first.map((h) => h.argv), [['bibtex', 'main']]);
    files['chapters/intro.aux'] = '\\citation{knuth}\n\\citation{lamport}\n';
    assert.equal((await planHelpers('main', { read: reader(files), log: '', fls, sources: [], done })).length, 1);
  });
});

describe('judgeHelper', () => {
  const biber = { id: 'biber', tool: 'biber' as const, argv: ['biber'], outputs: ['main.bbl'], key: '' };
  test('biber errors with a written .bbl are problems, not failures', async () => {
    const verdict = await judgeHelper(biber, { code: 2, output: 'ERROR - BibTeX subsystem: /tmp/biber_tmp_ab/c.utf8, line 4, syntax error\n' }, reader({ 'main.bbl': 'x' }));
    assert.deepEqual(verdict, { problems: ['BibTeX subsystem: the .bib file, line 4, syntax error'] });
  });
  test('a database that cannot be found is a missing database, not fatal, with or without a .bbl (as latexmk delivers it)', async () => {
    assert.deepEqual(await judgeHelper(biber, { code: 2, output: "ERROR - Cannot find 'refs.bib'!\n" }, reader({ 'main.bbl': 'x' })), { problems: [], missing: ['refs.bib'] });
    const bibtex = { id: 'bibtex:main.aux', tool: 'bibtex' as const, argv: ['bibtex', 'main'], outputs: ['main.bbl'], key: '', transcript: 'main.blg' };
    assert.deepEqual(await judgeHelper(bibtex, { code: 2, output: "I couldn't open database file refs.bib\n" }, reader({})), { problems: [], missing: ['refs.bib'] });
  });
  test('bibtex: exit 1 is warnings only; exit 2 without a .bbl is fatal', async () => {
    const bibtex = { id: 'bibtex:main.aux', tool: 'bibtex' as const, argv: ['bibtex', 'main'], outputs: ['main.bbl'], key: '', transcript: 'main.blg' };
    assert.deepEqual(await judgeHelper(bibtex, { code: 1, output: '' }, reader({ 'main.bbl': 'x' })), { problems: [] });
    assert.ok((await judgeHelper(bibtex, { code: 2, output: 'boom' }, reader({}))).fatal);
  });
});
