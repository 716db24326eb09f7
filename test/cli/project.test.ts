// What `quire compile` sends, without TeX: the client's main file is the one the service picks
// from the same zip (src/compile/project-zip.ts reads what src/cli/client/project.ts wrote),
// its limits are the service's, and the skip rules (build output, the PDF it writes, editor
// backups, dot folders, .quireignore with folders, anchors, globs and "!") leave out what
// they should and nothing else.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as service from '../../src/compile/project-zip.js';
import * as client from '../../src/cli/client/project.js';
import { isIgnored, parseIgnore } from '../../src/cli/client/ignore.js';
import { project } from './client-helpers.js';

const doc = (text: string) => `\\documentclass{article}\n\\begin{document}\n${text}\n\\end{document}\n`;

/** The client's choice, and what the service makes of the zip the client builds. */
async function bothSides(files: Record<string, string>, main?: string) {
  const dir = await project(files);
  try {
    const located = await client.locate(main ? join(dir, main) : dir, {});
    const collected = await client.collect(located);
    const served = service.expandProjectZip(Buffer.from(client.zipProject(collected.files)).toString('base64'));
    return { main: located.main, mainName: collected.mainName, latex: served.latex, sent: [...collected.files.keys()].sort(), served: Object.keys(served.files).sort() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('quire compile: the project it sends', () => {
  test('the limits are the service\'s', () => {
    assert.equal(client.ZIP_ENTRIES_MAX, service.ZIP_ENTRIES_MAX);
    assert.equal(client.ZIP_ENTRY_BYTES_MAX, service.ZIP_ENTRY_BYTES_MAX);
    assert.equal(client.ZIP_TOTAL_BYTES_MAX, service.ZIP_TOTAL_BYTES_MAX);
  });

  test('auto-detection agrees with the service on every shape of folder', async () => {
    // main.tex wins over another document
    let r = await bothSides({ 'main.tex': doc('MAIN'), 'other.tex': doc('OTHER') });
    assert.deepEqual([r.main, r.mainName, r.latex], ['main.tex', 'main.tex', doc('MAIN')]);
    // the single top-level .tex with \documentclass; a chapter without one, or deeper, is not a candidate
    r = await bothSides({ 'paper.tex': doc('PAPER'), 'macros.tex': '\\newcommand{\\x}{x}\n', 'chapters/intro.tex': doc('DEEP') });
    assert.deepEqual([r.main, r.mainName, r.latex], ['paper.tex', 'paper.tex', doc('PAPER')]);
    // a commented-out \documentclass does not make a candidate
    r = await bothSides({ 'paper.tex': doc('PAPER'), 'old.tex': `% ${doc('OLD')}` });
    assert.deepEqual([r.main, r.latex], ['paper.tex', doc('PAPER')]);
  });

  test('no main file, or several, is a usage error naming the candidates (the service refuses the same zip)', async () => {
    for (const [files, pattern] of [
      [{ 'a.tex': doc('A'), 'b.tex': doc('B') }, /2 top-level \.tex files .* \(a\.tex, b\.tex\): name the main one with --main/],
      [{ 'notes.tex': 'no document here\n' }, /no main file in .*name one with --main/],
    ] as const) {
      const dir = await project(files);
      await assert.rejects(client.locate(dir, {}), (err: Error) => err instanceof client.UsageError && pattern.test(err.message));
      const zip = client.zipProject(new Map(Object.entries(files).map(([name, text]) => [name, new TextEncoder().encode(text)])));
      assert.throws(() => service.expandProjectZip(Buffer.from(zip).toString('base64')), (err: { code?: string }) => err.code === 'invalid_project_zip');
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('--main (or a .tex PATH) the service would not pick travels as main.tex, and the service takes it as the main file', async () => {
    let r = await bothSides({ 'a.tex': doc('A'), 'b.tex': doc('B'), 'chapters/intro.tex': 'x\n' }, 'b.tex');
    assert.deepEqual([r.main, r.mainName, r.latex], ['b.tex', 'main.tex', doc('B')]);
    assert.deepEqual(r.sent, ['a.tex', 'chapters/intro.tex', 'main.tex']);
    // a main.tex beside it would be taken instead: it stays home
    r = await bothSides({ 'main.tex': doc('MAIN'), 'b.tex': doc('B') }, 'b.tex');
    assert.deepEqual([r.mainName, r.latex, r.sent], ['main.tex', doc('B'), ['main.tex']]);
    // the one the service picks anyway keeps its name
    r = await bothSides({ 'paper.tex': doc('PAPER') }, 'paper.tex');
    assert.deepEqual([r.mainName, r.latex], ['paper.tex', doc('PAPER')]);
  });

  test('build output, the old PDF, editor backups, dot folders and .quireignore stay home; the rest travels', async () => {
    const dir = await project({
      'thesis.tex': doc('T'),
      'thesis.pdf': '%PDF-old',
      'thesis.aux': 'x',
      'thesis.synctex.gz': 'x',
      'thesis.fdb_latexmk': 'x',
      'chapters/intro.tex': 'intro\n',
      'chapters/intro.aux': 'x',
      'chapters/intro.tex~': 'backup',
      'chapters/#intro.tex#': 'autosave',
      'figures/plot.pdf': '%PDF-figure',
      'refs.bib': '@misc{a, title={A}}\n',
      '.git/HEAD': 'ref',
      'Makefile': 'all:',
      'drafts/plan.tex': 'x',
      'secret-a.tex': 'x',
      'secret-keep.tex': 'kept',
      'data/big.csv': 'x',
      'data/small.csv': 'x',
      '.quireignore': '# comments and blank lines are skipped\n\ndrafts/\nsecret-*.tex\n!secret-keep.tex\n/data/big.*\n',
    });
    try {
      const located = await client.locate(dir, {});
      const { files, skipped } = await client.collect(located);
      assert.deepEqual([...files.keys()].sort(), ['chapters/intro.tex', 'data/small.csv', 'figures/plot.pdf', 'refs.bib', 'secret-keep.tex', 'thesis.tex']);
      const why = Object.fromEntries(skipped.map((s) => [s.path, s.reason]));
      assert.equal(why['thesis.pdf'], 'the PDF this command writes');
      assert.equal(why['thesis.aux'], 'build output (.aux)');
      assert.equal(why['thesis.synctex.gz'], 'build output (.synctex.gz)');
      assert.equal(why['chapters/intro.tex~'], 'an editor backup');
      assert.equal(why['drafts/'], 'matched by .quireignore');
      assert.equal(why['secret-a.tex'], 'matched by .quireignore');
      assert.equal(why['data/big.csv'], 'matched by .quireignore');
      assert.match(why['.git/']!, /dot folder/);
      assert.match(why.Makefile!, /without an extension/);
      // -o elsewhere: the old PDF beside the main file is still not sent, nor the new one inside the project
      const moved = await client.collect({ ...located, output: join(dir, 'figures', 'plot.pdf') });
      assert.ok(!moved.files.has('figures/plot.pdf') && !moved.files.has('thesis.pdf'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('.quireignore patterns mean what they mean in git', () => {
    const rules = parseIgnore('*.png\n/top.tex\nbuild/\ndocs/**/draft.tex\n!keep.png\n\\#hash.tex\n');
    const cases: Array<[string, boolean, boolean]> = [
      ['a.png', false, true],
      ['figs/a.png', false, true],
      ['keep.png', false, false],
      ['top.tex', false, true],
      ['sub/top.tex', false, false],
      ['build', true, true],
      ['build', false, false],
      ['sub/build', true, true],
      ['docs/draft.tex', false, true],
      ['docs/a/b/draft.tex', false, true],
      ['other/draft.tex', false, false],
      ['#hash.tex', false, true],
    ];
    for (const [path, folder, ignored] of cases) assert.equal(isIgnored(rules, path, folder), ignored, path);
  });

  test('a file over the per-file limit is listed, not sent; PATH and --main mistakes are usage errors', async () => {
    const dir = await project({ 'main.tex': doc('M'), 'data.csv': new Uint8Array(service.ZIP_ENTRY_BYTES_MAX + 1) });
    try {
      const { files, skipped } = await client.collect(await client.locate(dir, {}));
      assert.ok(!files.has('data.csv'));
      assert.deepEqual(skipped, [{ path: 'data.csv', reason: "16.0 MiB, over the service's 16 MiB per file" }]);
      await assert.rejects(client.locate(join(dir, 'nope'), {}), /no such file or folder/);
      await assert.rejects(client.locate(join(dir, 'data.csv'), {}), /is not a \.tex file or a folder/);
      await assert.rejects(client.locate(dir, { main: 'other.tex' }), /--main other\.tex: no such file/);
      await assert.rejects(client.locate(join(dir, 'main.tex'), { main: 'main.tex' }), /either a \.tex file or a folder with --main/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
