// The pass loop against real TeX in the real sandbox: each document compiles to the page
// count latexmk gives for the same files. Reference counts were measured once with
// `latexmk -pdf` (latexmk 4.79, TeX Live 2022 of Debian) in a directory holding the fixture's
// files; glossaries, nomencl and index.sty's \newindex with the custom rules latexmk's
// documentation gives for them (test/fixtures/projects/latexmkrc, `latexmk -r latexmkrc -pdf`),
// since latexmk runs none of them by default (it then gives gls 2, nom 2, but indexsty 2 and
// splitidx 1: the extra indexes stay empty). splitidx with latexmkrc-splitindex ($makeindex =
// splitindex; latexmk exits 12 looking for main.ind, with 3 pages). latexmk stops on biber's
// data error (exit 12) after one pass with 1 page; with `-f` it also delivers 1 page.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import type { TexJob } from '../../src/tex/job.js';
import { TexRunner } from '../../src/tex/runner.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const UID = process.getuid?.() === 0 ? CONVERTER_UID - 2 : undefined;
const MB = 1024 * 1024;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'projects');

/** Pages latexmk gives for each fixture (see the header). */
const LATEXMK_PAGES: Record<string, number> = {
  bibonly: 1,
  biberr: 1,
  idx3: 4,
  gls: 2,
  nom: 2,
  projbiber: 4,
  projbibtex: 4,
  indexsty: 3,
  splitidx: 3,
  blxindex: 2,
};

async function project(name: string): Promise<Pick<TexJob, 'source' | 'files'>> {
  const dir = join(FIXTURES, name);
  const files: Array<{ name: string; data: Buffer }> = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const rel = relative(dir, path);
    if (rel !== 'main.tex') files.push({ name: rel, data: await readFile(path) });
  }
  return { source: await readFile(join(dir, 'main.tex'), 'utf8'), files };
}

function text(pdf: Buffer | undefined): string {
  assert.ok(pdf, 'a PDF');
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
}

describe('pass loop', () => {
  let workRoot: string;
  let runner: TexRunner;
  const run = async (job: Pick<TexJob, 'source' | 'files'>, extra: Partial<TexJob> = {}) =>
    runner.run({ compiler: 'pdflatex', timeoutMs: 60_000, maxFileBytes: 8 * MB, ...job, ...extra }, UID);

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-passes-'));
    runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() });
  });
  after(async () => {
    await runner.close();
    await rm(workRoot, { recursive: true, force: true });
  });

  test('a document that only prints a biblatex list: empty first pass, biber, then pages', async () => {
    const result = await run(await project('bibonly'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.bibonly);
    assert.match(text(result.pdf), /The TeXbook/);
    assert.deepEqual(result.warnings, []);
    console.log(`bibonly: ${result.passes} passes, ${result.durationMs} ms`);
  });

  test('biber with a data error: the good entries are used and the error is a warning', async () => {
    const result = await run(await project('biberr'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.biberr);
    assert.match(text(result.pdf), /A Good Book/);
    const types = result.warnings!.map((w) => w.type);
    assert.ok(types.includes('bibliography_error'), JSON.stringify(result.warnings));
    const error = result.warnings!.find((w) => w.type === 'bibliography_error')!;
    assert.match(error.message, /^biber: .*syntax error: found "journal"/);
    console.log(`biberr: ${result.passes} passes, ${result.durationMs} ms`);
  });

  test('three imakeidx indexes each get makeindex and their own .ind', async () => {
    const result = await run(await project('idx3'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.idx3);
    const pdf = text(result.pdf);
    assert.match(pdf, /Index of authors[\s\S]*Knuth[\s\S]*Lamport/);
    assert.match(pdf, /Index of places[\s\S]*Paris[\s\S]*Rome/);
    console.log(`idx3: ${result.passes} passes, ${result.durationMs} ms`);
  });

  test('index.sty: \\newindex{aut}{adx}{and} gets makeindex main.adx into main.and', async () => {
    const result = await run(await project('indexsty'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.indexsty);
    assert.match(text(result.pdf), /Name Index[\s\S]*Knuth/);
  });

  test('splitidx without split: splitindex cuts main.idx and makeindex runs on each part', async () => {
    const result = await run(await project('splitidx'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.splitidx);
    assert.match(text(result.pdf), /General Index[\s\S]*alpha[\s\S]*Index of Names[\s\S]*Knuth/);
  });

  test('biblatex indexing=cite: biber, then makeindex on the .idx biblatex wrote', async () => {
    const result = await run(await project('blxindex'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.blxindex);
    assert.match(text(result.pdf), /Index[\s\S]*Knuth[\s\S]*Lamport/);
  });

  test('glossaries: the makeindex call of makeglossaries, read from the .aux', async () => {
    const result = await run(await project('gls'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.gls);
    assert.match(text(result.pdf), /Glossary[\s\S]*A document preparation system/);
    console.log(`gls: ${result.passes} passes, ${result.durationMs} ms`);
  });

  test('nomencl: makeindex with nomencl.ist into main.nls', async () => {
    const result = await run(await project('nom'));
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.equal(result.pages, LATEXMK_PAGES.nom);
    assert.match(text(result.pdf), /Nomenclature[\s\S]*Speed of light/);
    console.log(`nom: ${result.passes} passes, ${result.durationMs} ms`);
  });

  for (const name of ['projbiber', 'projbibtex']) {
    test(`a project with chapters/intro.tex and refs.bib (${name === 'projbiber' ? 'biber' : 'bibtex'})`, async () => {
      const result = await run(await project(name));
      assert.equal(result.outcome, 'ok', result.log.slice(-2000));
      assert.equal(result.pages, LATEXMK_PAGES[name]);
      const pdf = text(result.pdf);
      assert.match(pdf, /Introduction/);
      assert.match(pdf, /Chapter 1\./);
      assert.match(pdf, /Knuth/);
      assert.doesNotMatch(pdf, /\?\?/);
      assert.deepEqual(result.warnings, []);
      console.log(`${name}: ${result.passes} passes, ${result.durationMs} ms`);
    });
  }

  test('a .bib that was not sent is a missing_file warning on the PDF, as latexmk delivers it (issue 39)', async () => {
    const { source } = await project('projbiber');
    const result = await run({ source, files: (await project('projbiber')).files!.filter((f) => !f.name.endsWith('.bib')) });
    assert.equal(result.outcome, 'ok', result.log.slice(-500));
    assert.ok((result.warnings ?? []).some((w) => w.type === 'missing_file' && w.symbol === 'refs.bib'), JSON.stringify(result.warnings));
  });

  test('a project file cannot read outside the workspace: the canary never appears in the log or the PDF', async () => {
    const canaryDir = await mkdtemp(join(tmpdir(), 'quire-canary-'));
    const canary = `CANARY${randomBytes(12).toString('hex')}`;
    await writeFile(join(canaryDir, 'secret.tex'), canary);
    const evil = [
      `\\input{${canaryDir}/secret}`,
      `\\input{../../${canaryDir.split('/').at(-1)}/secret}`,
      `\\IfFileExists{${canaryDir}/secret.tex}{\\input{${canaryDir}/secret.tex}}{absent}`,
    ];
    try {
      for (const line of evil) {
        const source = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/evil}\n\\end{document}\n';
        const result = await run({ source, files: [{ name: 'chapters/evil.tex', data: Buffer.from(`${line}\n`) }] });
        assert.ok(!result.log.includes(canary), line);
        if (result.pdf) assert.ok(!text(result.pdf).includes(canary), line);
        assert.ok(!JSON.stringify(result.warnings ?? []).includes(canary), line);
      }
    } finally {
      await rm(canaryDir, { recursive: true, force: true });
    }
  });

  test('warnings: undefined reference and citation with their lines, pdflatex font slots', async () => {
    const source = '\\documentclass{article}\n\\begin{document}\nSee \\ref{nowhere}.\nAnd \\cite{nobody}.\nA\\symbol{200}.\n\\end{document}\n';
    const result = await run({ source });
    assert.equal(result.outcome, 'ok', result.log.slice(-2000));
    assert.deepEqual(result.warnings, [
      {
        type: 'undefined_reference',
        message: 'The reference "nowhere" points to no \\label.',
        line: 3,
        fix: 'Add \\label{nowhere} where the target is, or fix the name in \\ref{nowhere}.',
      },
      {
        type: 'undefined_citation',
        message: 'The citation "nobody" is not in the bibliography.',
        line: 4,
        fix: 'Add an entry with the key "nobody" to the .bib file (or fix the key in \\cite), and make sure the .bib file is sent in "files".',
      },
      {
        type: 'missing_glyph',
        message: 'The font cmr10 has no character in slot 200 (0xC8); pdflatex left it out of the PDF.',
        fix: 'Use a font encoding that has the character (\\usepackage[T1]{fontenc}) or write it with its LaTeX command instead of \\symbol/\\char.',
      },
    ]);
  });
});
