// Real project inputs (issue #22), through the real HTTP route with real TeX and Ghostscript:
// fonts as assets and project files (xelatex/lualatex by file name and Path=), EPS converted on
// every engine, folders up to sixteen deep with binary files as {"base64"}, text files of any
// extension, and project_zip. Every bad input (a font that is not a font, a bomb, a path
// escape, links, too many or too deep files) is a catalogue 422 with its exact code, charges
// nothing and writes nothing outside the workspace.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { zipSync, strToU8 } from 'fflate';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const ASSETS = join(import.meta.dirname, '..', 'fixtures', 'assets');
const b64 = async (name: string) => (await readFile(join(ASSETS, name))).toString('base64');

/** A file sixteen folders deep (the most a project path may hold) and a path of 1,100 bytes in parts under 255. */
const SIXTEEN = `${Array.from({ length: 16 }, (_, i) => `d${i}`).join('/')}/deepest.tex`;
const LONG = `${Array.from({ length: 10 }, () => 'x'.repeat(100)).join('/')}/long-name-past-the-bound.tex`;

const PLAIN_PS = Buffer.from('%!PS-Adobe-3.0\n%%BoundingBox: 0 0 100 50\nnewpath 10 10 moveto 90 40 lineto 2 setlinewidth stroke\nshowpage\n%%EOF\n');

const FONT_DOC = (font: string) =>
  `\\documentclass{article}\n\\usepackage{fontspec}\n${font}\n\\begin{document}\nBrand text.\n\\end{document}\n`;
// The figures keep their bounding box (100 by 50 bp), not an A4 page's, the document stops
// otherwise: an EPSF file, and a PostScript file whose first line does not say EPSF but that
// has a %%BoundingBox, which epstopdf crops too (REVTeX's sample figures).
const EPS_DOC = [
  '\\documentclass{article}',
  '\\usepackage{graphicx}',
  '\\begin{document}',
  '\\includegraphics{figures/fig1.eps}',
  ...['figures/fig1', 'figures/plain'].flatMap((fig) => [
    `\\sbox0{\\includegraphics{${fig}}}\\usebox0`,
    '\\ifdim\\wd0<101bp \\ifdim\\ht0<51bp \\else\\errmessage{height \\the\\ht0}\\fi\\else\\errmessage{width \\the\\wd0}\\fi',
  ]),
  '\\end{document}',
  '',
].join('\n');

/** A zip of `entries` (text or bytes), with per-entry fflate options such as Unix attributes. */
function zip(entries: Record<string, string | Uint8Array | [Uint8Array, object]>): string {
  const input = Object.fromEntries(
    Object.entries(entries).map(([name, value]) => [name, typeof value === 'string' ? strToU8(value) : value]),
  ) as Parameters<typeof zipSync>[0];
  return Buffer.from(zipSync(input)).toString('base64');
}

/** Rewrites the uncompressed size the central directory states for every entry. */
function claimSize(base64: string, size: number): string {
  const data = Buffer.from(base64, 'base64');
  for (let at = 0; at + 46 <= data.length; at++) if (data.readUInt32LE(at) === 0x02014b50) data.writeUInt32LE(size, at + 24);
  return data.toString('base64');
}

async function findByName(dir: string, name: string, depth = 4): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name === name) return true;
    if (depth > 0 && entry.isDirectory() && (await findByName(join(dir, entry.name), name, depth - 1))) return true;
  }
  return false;
}

describe('real project inputs: fonts, EPS, folders, binary files, project_zip', () => {
  let t: TestApp;
  let account: TestAccount;
  // Absolute paths aim here; nothing may appear in it.
  const canary = join(tmpdir(), `quire-canary-${process.pid}`);
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'business');
    await mkdir(canary);
  });
  after(async () => {
    await rm(canary, { recursive: true, force: true });
    await t.close();
  });

  const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });
  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage.used_this_month as number;

  test('a font asset by file name (xelatex) and a font in fonts/ with Path= (lualatex) both typeset with it', async () => {
    const font = await b64('Brand-Regular.otf');
    const byName = await compile({ latex: FONT_DOC('\\setmainfont{Brand-Regular.otf}'), compiler: 'xelatex', assets: { 'Brand-Regular.otf': font } });
    assert.equal(byName.statusCode, 200, byName.body);
    assert.deepEqual(byName.json().ephemeral_assets_used, ['Brand-Regular.otf']);
    const withPath = await compile({
      latex: FONT_DOC('\\setmainfont{Brand-Regular}[Path=fonts/, Extension=.otf]'),
      compiler: 'lualatex',
      files: { 'fonts/Brand-Regular.otf': { base64: font } },
    });
    assert.equal(withPath.statusCode, 200, withPath.body);
    assert.equal(withPath.json().pages, 1);
  });

  test('the same font under pdflatex fails with a diagnosis that says to use xelatex or lualatex', async () => {
    const res = await compile({ latex: FONT_DOC('\\setmainfont{Brand-Regular.otf}'), assets: { 'Brand-Regular.otf': await b64('Brand-Regular.otf') } });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'compilation_failed');
    assert.match(JSON.stringify(res.json().diagnosis), /xelatex or lualatex|xelatex, lualatex|lualatex or xelatex/);
  });

  for (const compiler of ['pdflatex', 'xelatex', 'lualatex']) {
    test(`EPS in figures/ is converted and included as {fig1.eps} and {fig1} (${compiler})`, async () => {
      const res = await compile({ latex: EPS_DOC, compiler, files: { 'figures/fig1.eps': { base64: await b64('fig1.eps') }, 'figures/plain.eps': { base64: PLAIN_PS.toString('base64') } } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().pages, 1);
    });
  }

  test('five and sixteen folders deep (a local texmf tree), a .lco letter option file and a .tikz picture: text of any extension, \\includegraphics{figures/plot}', async () => {
    const latex = [
      '\\documentclass[brand]{scrlttr2}',
      '\\usepackage{graphicx,tikz}',
      '\\begin{document}',
      '\\begin{letter}{Someone}',
      '\\opening{Hello,}',
      '\\input{chapters/part1/sub/deep/body.tex}',
      '\\input{texmf/tex/latex/brand/preset/brand.def}',
      `\\input{${SIXTEEN}}`,
      '\\includegraphics[width=2cm]{figures/plot}',
      '\\input{pics/box.tikz}',
      '\\closing{Bye}',
      '\\end{letter}',
      '\\end{document}',
    ].join('\n');
    const res = await compile({
      latex,
      files: {
        'brand.lco': '\\ProvidesFile{brand.lco}\\setkomavar{fromname}{Brand Ltd}\n',
        'chapters/part1/sub/deep/body.tex': 'Deep text.\n',
        'texmf/tex/latex/brand/preset/brand.def': 'Preset text.\n',
        [SIXTEEN]: 'Deepest text.\n',
        'figures/plot.png': { base64: await b64('logo.png') },
        'pics/box.tikz': '\\begin{tikzpicture}\\draw (0,0) rectangle (1,1);\\end{tikzpicture}\n',
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().ephemeral_assets_used, ['figures/plot.png']);
  });

  test('project_zip: a GitHub-style archive with a top folder, thesis.tex as the one \\documentclass file, figures and clutter', async () => {
    const png = await readFile(join(ASSETS, 'logo.png'));
    const project_zip = zip({
      'repo-main/thesis.tex': '\\documentclass{report}\n\\usepackage{graphicx}\n\\begin{document}\n\\include{chapters/one}\n\\includegraphics{figures/logo}\n\\end{document}\n',
      'repo-main/chapters/one.tex': '\\chapter{One}\nText.\n',
      'repo-main/figures/logo.png': png,
      'repo-main/README': 'not needed',
      'repo-main/.gitignore': '*.aux',
      'repo-main/__MACOSX/._thesis.tex': 'junk',
    });
    const res = await compile({ project_zip });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().pages, 2);
  });

  test('project_zip: main.bib and chap.01.intro.tex are the project\'s, a local build\'s main.pdf, main.aux and main.log are dropped', async () => {
    const project_zip = zip({
      'paper/main.tex': '\\documentclass{article}\n\\begin{document}\n\\input{chapters/chap.01.intro}\n\\bibliographystyle{plain}\n\\bibliography{main}\n\\end{document}\n',
      'paper/main.bib': '@book{knuth, author={Donald E. Knuth}, title={The TeXbook}, publisher={Addison-Wesley}, year={1984}}\n',
      'paper/chapters/chap.01.intro.tex': 'As \\cite{knuth} shows.\n',
      'paper/main.pdf': new Uint8Array(Buffer.from('%PDF-1.5 stale')),
      // A stale .aux that would break the first pass if it were kept.
      'paper/main.aux': '\\undefinedcommandfromastalebuild\n',
      'paper/main.log': 'old transcript',
    });
    const res = await compile({ project_zip });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().pages, 1);
    assert.deepEqual(res.json().warnings, []);
  });

  const font = Buffer.from('this is not a font at all, just text');
  const fakeOtf = Buffer.concat([Buffer.from('OTTO'), Buffer.alloc(200)]);
  const png = () => b64('logo.png');
  const bad: Array<[string, () => Promise<object>, string, Record<string, unknown>]> = [
    ['a text file named .otf', async () => ({ assets: { 'Brand.otf': font.toString('base64') } }), 'invalid_asset_format', { asset: 'Brand.otf', detected_format: null }],
    ['an OTTO header with no tables', async () => ({ files: { 'fonts/Brand.otf': { base64: fakeOtf.toString('base64') } } }), 'invalid_asset_format', { asset: 'fonts/Brand.otf' }],
    ['an EPS Ghostscript cannot read', async () => ({ files: { 'fig.eps': { base64: Buffer.from('%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nnonsense_operator\n').toString('base64') } } }), 'invalid_asset_format', { asset: 'fig.eps', expected_format: 'postscript' }],
    ['files: ../ escape', async () => ({ files: { '../escape.tex': 'x' } }), 'invalid_asset_filename', { file: '../escape.tex' }],
    ['files: nested ../ escape', async () => ({ files: { 'a/../../escape.tex': 'x' } }), 'invalid_asset_filename', { file: 'a/../../escape.tex' }],
    ['files: absolute path', async () => ({ files: { [`${canary}/abs.tex`]: 'x' } }), 'invalid_asset_filename', {}],
    ['files: backslash', async () => ({ files: { 'a\\escape.tex': 'x' } }), 'invalid_asset_filename', { file: 'a\\escape.tex' }],
    // The JSON layer refuses NUL in any string of a body (src/wire/json-safety.ts) before the file rules run.
    ['files: NUL in the name', async () => ({ files: { 'a\0.tex': 'x' } }), 'validation_failed', {}],
    ['files: seventeen folders', async () => ({ files: { [`a/${SIXTEEN}`]: 'x' } }), 'invalid_asset_filename', { file: `a/${SIXTEEN}`, limit: 16 }],
    ['files: a path over 1024 bytes', async () => ({ files: { [LONG]: 'x' } }), 'invalid_asset_filename', { file: LONG, limit: 1024 }],
    ['files: binary text value', async () => ({ files: { 'blob.dat': 'ab\0cd' } }), 'validation_failed', { fields: [{ field: 'files.blob.dat', rule: 'no_nul', message: 'must not contain a NUL byte (\\u0000)' }] }],
    ['files: a png sent as text', async () => ({ files: { 'logo.png': 'x' } }), 'invalid_asset_format', { file: 'logo.png' }],
    ['files: {base64} of a non-asset type', async () => ({ files: { 'run.sh': { base64: 'eA==' } } }), 'invalid_asset_format', { file: 'run.sh' }],
    ['files: a renamed png', async () => ({ files: { 'figures/photo.jpg': { base64: await png() } } }), 'invalid_asset_format', { asset: 'figures/photo.jpg', detected_format: 'png' }],
    ['files: too many', async () => ({ files: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`f${i}.tex`, ''])) }), 'validation_failed', {}],
    ['zip: ratio bomb', async () => ({ project_zip: zip({ 'main.tex': HELLO, 'zeros.txt': new Uint8Array(8 * 1024 * 1024) }) }), 'invalid_project_zip', { entry: 'zeros.txt', limit: 100 }],
    ['zip: an entry whose header lies about its size', async () => ({ project_zip: claimSize(zip({ 'main.tex': HELLO, 'big.txt': 'y'.repeat(50_000) }), 100) }), 'invalid_project_zip', {}],
    ['zip: entries claiming more than the total', async () => ({ project_zip: claimSize(zip({ 'main.tex': HELLO, 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c', 'd.txt': 'd' }), 15 * 1024 * 1024) }), 'invalid_project_zip', { limit: 48 * 1024 * 1024 }],
    ['zip: ../ entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, '../escape.tex': 'x' }) }), 'invalid_project_zip', { entry: '../escape.tex' }],
    ['zip: absolute entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, [`${canary}/abs.tex`]: 'x' }) }), 'invalid_project_zip', { entry: `${canary}/abs.tex` }],
    ['zip: backslash entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, '..\\escape.tex': 'x' }) }), 'invalid_project_zip', { entry: '..\\escape.tex' }],
    ['zip: NUL entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, 'a\0.tex': 'x' }) }), 'invalid_project_zip', { entry: 'a\0.tex' }],
    ['zip: control character in an entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, 'chapters/a\u001b[2J.tex': 'x' }) }), 'invalid_project_zip', { entry: 'chapters/a\u001b[2J.tex' }],
    ['zip: symlink entry', async () => ({ project_zip: zip({ 'main.tex': HELLO, 'link.tex': [strToU8('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }] }) }), 'invalid_project_zip', { entry: 'link.tex' }],
    ['zip: duplicate names', async () => ({ project_zip: zip({ 'main.tex': HELLO, 'a.tex': 'x', 'A.tex': 'y' }) }), 'invalid_project_zip', { entry: 'A.tex' }],
    ['zip: seventeen folders', async () => ({ project_zip: zip({ 'main.tex': HELLO, [`a/${SIXTEEN}`]: 'x' }) }), 'invalid_project_zip', { entry: `a/${SIXTEEN}`, limit: 16 }],
    ['zip: seventeen folders under a top folder', async () => ({ project_zip: zip({ 'repo-main/main.tex': HELLO, [`repo-main/a/${SIXTEEN}`]: 'x' }) }), 'invalid_project_zip', { entry: `repo-main/a/${SIXTEEN}`, limit: 16 }],
    ['zip: a path over 1024 bytes', async () => ({ project_zip: zip({ 'main.tex': HELLO, [LONG]: 'x' }) }), 'invalid_project_zip', { entry: LONG, limit: 1024 }],
    ['zip: too many entries', async () => ({ project_zip: zip({ 'main.tex': HELLO, ...Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}.tex`, ''])) }) }), 'invalid_project_zip', { limit: 1000 }],
    ['zip: two main candidates', async () => ({ project_zip: zip({ 'a.tex': HELLO, 'b.tex': HELLO }) }), 'invalid_project_zip', { candidates: ['a.tex', 'b.tex'] }],
    ['zip: not a zip', async () => ({ project_zip: Buffer.from('plain text, not an archive').toString('base64') }), 'invalid_project_zip', {}],
    ['zip and latex together', async () => ({ latex: HELLO, project_zip: zip({ 'main.tex': HELLO }) }), 'invalid_project_zip', {}],
  ];
  for (const [label, payload, code, details] of bad) {
    test(`${label} → 422 ${code}, nothing charged, nothing written outside`, async () => {
      const before = await used();
      const body = await payload();
      const res = await compile('latex' in body || 'project_zip' in body ? body : { latex: HELLO, ...body });
      assert.equal(res.statusCode, 422, res.body);
      const json = res.json();
      assert.equal(json.error, code, res.body);
      for (const [key, value] of Object.entries(details)) assert.deepEqual(json[key], value, key);
      assert.equal(await used(), before);
      assert.deepEqual(await readdir(canary), []);
      assert.equal(await findByName(tmpdir(), 'escape.tex'), false);
      assert.equal(existsSync('/escape.tex'), false);
    });
  }
});
