// The preamble cache (preamble.ts, format-cache.ts, format-build.ts, preamble-cache.ts) with real TeX:
// a run with a cached format gives the pages of a cold run for every gallery template and for
// test documents (a body error on the same line), formats never cross accounts, a preamble
// reading a job file (main.tex's body above all) is never cached, whether the patterns or the
// build's recorder and second document catch it, a preamble that writes a file is never
// cached, and the store evicts by bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { loadCatalog } from '../../src/gallery/catalog.js';
import { normaliseData } from '../../src/gallery/validate.js';
import { renderInThread } from '../../src/templates/liquid.js';
import { buildFormat, FORMAT_CAP, inBuildSandbox, INFLATED_CAP, inflateFormat } from '../../src/tex/caches/format-build.js';
import { FormatCache, type FormatEntry } from '../../src/tex/caches/format-cache.js';
import { preambleKey, refusal, splitPreamble, texliveIdentity } from '../../src/tex/caches/preamble.js';
import { MEMORY_BYTES, PROCESSES, type TexJob, type TexResult } from '../../src/tex/job.js';
import { PreambleCache } from '../../src/tex/caches/preamble-cache.js';
import { PrimedFormats } from '../../src/tex/caches/primed-formats.js';
import { TexRunner } from '../../src/tex/runner.js';
import type { Workspace } from '../../src/tex/sandbox/workspace.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 3 : undefined;
const MB = 1024 * 1024;
const DAY = '2026-11-23';

/** Every page rendered (pdftoppm, 50 dpi, all pages in one stream). */
function pages(result: TexResult): Buffer {
  assert.equal(result.outcome, 'ok', result.log.slice(-2000));
  return execFileSync('pdftoppm', ['-r', '50', '-'], { input: result.pdf!, maxBuffer: 512 * MB });
}

function text(result: TexResult): string {
  return execFileSync('pdftotext', ['-', '-'], { input: result.pdf! }).toString('utf8');
}

/** A run used a cached format: its transcript names the dumped format. */
const usedFormat = (result: TexResult) => /preloaded format=quirepre/.test(result.log);

const HEAVY = [
  '\\documentclass{article}',
  '\\usepackage{tikz}',
  '\\usepackage{pgfplots}',
  '\\pgfplotsset{compat=1.18}',
  '\\usepackage{siunitx}',
  '\\usepackage{hyperref}',
  '\\usepackage{cleveref}',
  '\\makeatletter',
  '\\newcommand\\quirenote{\\@ifnextchar[{\\textbf}{\\textit}}',
  '\\makeatother',
  '',
].join('\n');
const heavy = (body: string) => `${HEAVY}\\begin{document}\n\\tableofcontents\n\\section{Intro}\\label{s}\nSee \\cref{s}. \\SI{3}{\\metre}. ${body}\n\\begin{tikzpicture}\\begin{axis}\\addplot{x^2};\\end{axis}\\end{tikzpicture}\n\\end{document}\n`;

describe('preamble cache', () => {
  let workRoot: string;
  let cold: TexRunner;
  let cached: PreambleCache;
  let formats: FormatCache;
  const builds: Array<{ admitted: boolean; reason?: string }> = [];
  const job = (source: string, scope: string, extra: Partial<TexJob> = {}): TexJob => ({
    source,
    compiler: 'pdflatex',
    timeoutMs: 60_000,
    maxFileBytes: 16 * MB,
    preamble: { scope, day: DAY },
    ...extra,
  });
  /** Runs the job, then waits for the format build it may have started. */
  const run = async (j: TexJob) => {
    const result = await cached.run(j, UID);
    await cached.formatsIdle();
    return result;
  };

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-preamble-'));
    formats = new FormatCache(512 * MB);
    cold = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() });
    cached = new PreambleCache(new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() }), { root: defaultImageRoot(), formats, onFormatBuild: (outcome) => builds.push(outcome) });
  });
  after(async () => {
    await Promise.all([cold.close(), cached.close()]);
    await rm(workRoot, { recursive: true, force: true });
  });

  test('every gallery template: the cached render has the pages of a cold one', async () => {
    for (const template of loadCatalog()) {
      const color = template.default_color;
      const values = normaliseData(template.schema, template.sample_data) as Record<string, unknown>;
      const { latex } = await renderInThread(template.latex_with_placeholders, { ...values, theme: { name: color, accent: template.palette[color] } });
      const split = splitPreamble(latex);
      assert.ok(split, `${template.slug}: a \\begin{document} line`);
      assert.equal(refusal(split.preamble), null, template.slug);
      const first = await run(job(latex, 'gallery'));
      assert.deepEqual(builds.at(-1), { admitted: true }, template.slug);
      const again = await run(job(latex, 'gallery'));
      assert.ok(usedFormat(again), `${template.slug}: ran with the format`);
      const reference = await cold.run(job(latex, 'gallery'), UID);
      assert.ok(!usedFormat(first) && !usedFormat(reference));
      assert.ok(pages(again).equals(pages(reference)), `${template.slug}: same pages`);
      assert.equal(again.pages, reference.pages);
      assert.deepEqual(again.warnings, reference.warnings, template.slug);
    }
  });

  test('a heavy document: same pages and passes, and a body error is reported on the same line', async () => {
    await run(job(heavy('First.'), 'account:1'));
    const hit = await run(job(heavy('Second, fresh text.'), 'account:1'));
    const reference = await cold.run(job(heavy('Second, fresh text.'), 'account:1'), UID);
    assert.ok(usedFormat(hit));
    // Pass 2's engine started during pass 1 opened no file of the job before its turn: the transcript is whole.
    assert.match(hit.log, /^This is pdfTeX[^]*\(\.\/main\.tex[^]*Output written on main\.pdf/);
    assert.ok(pages(hit).equals(pages(reference)));
    assert.equal(hit.passes, reference.passes);

    const broken = heavy('A \\missingmacro here.');
    const before = formats.stats.rejections;
    const failed = await run(job(broken, 'account:1'));
    const coldFailed = await cold.run(job(broken, 'account:1'), UID);
    assert.equal(failed.outcome, 'failed');
    assert.ok(usedFormat(failed), 'the body error came from the run with the format (no cold rerun)');
    const line = (log: string) => /^\.\/main\.tex:(\d+): (.*)$/m.exec(log)?.slice(1, 3);
    assert.deepEqual(line(failed.log), ['14', 'Undefined control sequence.']);
    assert.deepEqual(line(failed.log), line(coldFailed.log));
    assert.equal(formats.stats.rejections, before);
  });

  test("the l3 kernel's job constants in a job from the format are the job's, not the dump's", async () => {
    // expl3 makes \c_sys_jobname_str and \c_sys_timestamp_str in \everyjob; a format that kept the
    // dump's would name files `quirepre.*` (some 40 packages name files after the constant) and
    // date the document at the build. The timestamp is made from \pdfcreationdate at the job's start.
    const source = (n: string) => heavy(`${n} \\ExplSyntaxOn job=\\c_sys_jobname_str{}~ts=\\c_sys_timestamp_str{}~pd=\\tex_creationdate:D{} \\ExplSyntaxOff`);
    await run(job(source('One.'), 'account:7'));
    assert.deepEqual(builds.at(-1), { admitted: true });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the job starts in a later second than the dump
    const hit = await run(job(source('Two.'), 'account:7'));
    assert.ok(usedFormat(hit), 'ran with the format');
    const shown = /job=(\S+) ts=(\S+) pd=(\S+)/.exec(text(hit).replace(/\s+/g, ' '));
    assert.ok(shown, text(hit));
    assert.equal(shown[1], 'main');
    assert.equal(shown[2], shown[3], "the timestamp is the job's creation date");
  });

  test('another account never uses the format: it misses and runs cold', async () => {
    const source = heavy('Account two.');
    await run(job(heavy('Account one, warming.'), 'account:1'));
    const hitsBefore = formats.stats.hits;
    const missesBefore = formats.stats.misses;
    const other = await run(job(source, 'account:2'));
    assert.equal(other.outcome, 'ok');
    assert.ok(!usedFormat(other));
    assert.equal(formats.stats.hits, hitsBefore);
    assert.equal(formats.stats.misses, missesBefore + 1);
  });

  test('a preamble that reads a job file is not cached: each compile shows its own value', async () => {
    const source = '\\documentclass{article}\n\\usepackage{tikz}\n\\input{defs}\n\\begin{document}\nValue: \\quirevalue.\n\\end{document}\n';
    const defs = (value: string) => [{ name: 'defs.tex', data: Buffer.from(`\\newcommand\\quirevalue{${value}}\n`) }];
    assert.equal(refusal(splitPreamble(source)!.preamble, ['defs.tex']), 'reads of its own job files');
    const buildsBefore = formats.stats.builds;
    for (const value of ['POISON', 'clean', 'POISON']) {
      const result = await run(job(source, 'account:1', { files: defs(value) }));
      assert.ok(!usedFormat(result));
      assert.match(text(result), new RegExp(`Value: ${value}\\.`));
    }
    assert.equal(formats.stats.builds, buildsBefore, 'refused before any build');
  });

  // A preamble reading a line of main.tex's body must never replay it into a later document.
  const OPENIN = [
    '\\documentclass{article}',
    '\\usepackage{tikz}',
    '\\newread\\quirein',
    '\\openin\\quirein=main.tex',
    '\\def\\quireskip{\\readline\\quirein to\\quireline}',
    '\\quireskip\\quireskip\\quireskip\\quireskip\\quireskip\\quireskip\\quireskip\\quireskip\\quireskip',
    '\\closein\\quirein',
    '',
  ].join('\n');
  /** The body's line 9 of main.tex (the one the preamble reads), then what the preamble read of it. */
  const reader = (preamble: string, secret: string) => `${preamble}\\begin{document}\nSecret ${secret} here\n\n Read: \\quireline\n\\end{document}\n`;
  /** What the preamble read, as the body printed it (\\readline keeps the end of line: a glyph after it). */
  const readOf = (result: TexResult) => /Read: (Secret \w+ here)/.exec(text(result))?.[1];

  test('a preamble that reads main.tex with \\openin and \\readline: every compile shows only its own body line', async () => {
    assert.equal(refusal(splitPreamble(reader(OPENIN, 'x'))!.preamble), 'file reads');
    const buildsBefore = formats.stats.builds;
    for (const secret of ['alpha', 'bravo', 'alpha', 'bravo']) {
      const result = await run(job(reader(OPENIN, secret), 'account:6'));
      assert.ok(!usedFormat(result));
      assert.equal(readOf(result), `Secret ${secret} here`);
      assert.doesNotMatch(text(result), new RegExp(secret === 'alpha' ? 'bravo' : 'alpha'));
    }
    assert.equal(formats.stats.builds, buildsBefore, 'refused before any build');
  });

  // The same read spelled so that no pattern sees it: the build's recorder does.
  const HIDDEN = OPENIN.replace('\\openin\\quirein', '\\csname openin\\endcsname\\quirein').replace('\\readline\\quirein', '\\csname readline\\endcsname\\quirein').replace('\\closein', '\\csname closein\\endcsname');

  test('the same read hidden from the patterns: the build is rejected by its recorder, and no compile sees another body', async () => {
    assert.equal(refusal(splitPreamble(reader(HIDDEN, 'x'))!.preamble), null, 'the patterns miss it');
    const buildsBefore = formats.stats.builds;
    for (const secret of ['charlie', 'delta', 'charlie']) {
      const result = await run(job(reader(HIDDEN, secret), 'account:7'));
      assert.ok(!usedFormat(result));
      assert.equal(readOf(result), `Secret ${secret} here`);
    }
    assert.equal(formats.stats.builds, buildsBefore + 1, 'built once, rejected, not tried again');
    assert.deepEqual(builds.at(-1), { admitted: false, reason: 'the preamble read main.tex' });
  });

  /** buildFormat in a fresh sandbox holding the job, `workspace` seen through `view`. */
  const build = (source: string, files: TexJob['files'] = [], view: (workspace: Workspace) => Workspace = (w) => w) =>
    inBuildSandbox(cold.pool, job(source, 'account:8', { files }), UID, { cpuSeconds: 30, fileBytes: FORMAT_CAP, memoryBytes: MEMORY_BYTES, processes: PROCESSES }, 512 * MB, new AbortController().signal, async (exec, workspace) => {
      const texlive = await texliveIdentity(defaultImageRoot());
      return buildFormat(exec, view(workspace), { source, files: files ?? [], day: DAY, baseBytes: texlive.baseBytes, preambleLines: splitPreamble(source)!.lines });
    });

  test('a build proves the format on a second document with another body: a read the recorder missed is caught there', async () => {
    // A recorder that saw only mylatexformat's own read of main.tex.
    const blind = (workspace: Workspace): Workspace =>
      Object.assign(Object.create(workspace) as Workspace, {
        readCapped: async (name: string, cap: number) => {
          const data = await workspace.readCapped(name, cap);
          if (!data || !name.endsWith('.fls')) return data;
          let seen = 0;
          const lines = data.toString('utf8').split('\n').filter((line) => !/^INPUT (\/job\/|\.\/)*main\.tex$/.test(line) || ++seen === 1);
          return Buffer.from(lines.join('\n'));
        },
      });
    assert.deepEqual(await build(reader(HIDDEN, 'echo'), [], blind), { rejected: 'the second document: the pages differ from a cold compile' });
    // The same preamble without the read passes both documents.
    const clean = await build(heavy('Clean.'));
    assert.ok('entry' in clean, JSON.stringify(clean));
  });

  test('a preamble that loads a job file by a hidden name is rejected by the recorder', async () => {
    const source = '\\documentclass{article}\n\\usepackage{tikz}\n\\csname usepackage\\endcsname{defs}\n\\begin{document}\nValue: \\quirevalue.\n\\end{document}\n';
    assert.equal(refusal(splitPreamble(source)!.preamble, ['defs.sty']), null, 'the patterns miss it');
    const files = [{ name: 'defs.sty', data: Buffer.from('\\newcommand\\quirevalue{kept}\n') }];
    assert.deepEqual(await build(source, files), { rejected: 'the preamble read defs.sty, a job file' });
  });

  test('a format that fails where a cold run would not: the job runs cold and the format goes', async () => {
    const source = heavy('Broken format.');
    const { id } = await texliveIdentity(defaultImageRoot());
    const key = preambleKey({ scope: 'account:5', day: DAY, engine: 'pdflatex', preamble: splitPreamble(source)!.preamble, texlive: id });
    formats.admit(key, { fmt: Buffer.from('not a format'), present: new Set() });
    const rejections = formats.stats.rejections;
    const result = await run(job(source, 'account:5'));
    assert.equal(result.outcome, 'ok');
    assert.ok(!usedFormat(result));
    assert.match(text(result), /Broken format\./);
    assert.equal(formats.stats.rejections, rejections + 1);
    assert.ok(!formats.has(key) && formats.isRefused(key));
  });

    test('a preamble too light to gain from a format is not kept (the warm engine is quicker)', async () => {
    const source = '\\documentclass{article}\n\\begin{document}\nLight.\n\\end{document}\n';
    assert.equal((await run(job(source, 'account:4'))).outcome, 'ok');
    assert.deepEqual(builds.at(-1), { admitted: false, reason: 'the preamble is too light to gain from a format' });
    const buildsBefore = formats.stats.builds;
    assert.ok(!usedFormat(await run(job(source.replace('Light', 'Light again'), 'account:4'))));
    assert.equal(formats.stats.builds, buildsBefore, 'a rejected preamble is not built again');
  });

  test('a preamble that writes a file is never cached', async () => {
    // Spelled through \csname, so that only the build's comparison with a cold compile sees it.
    const source = [
      '\\documentclass{article}',
      '\\usepackage{tikz}',
      '\\csname newwrite\\endcsname\\quireout',
      '\\csname immediate\\endcsname\\csname openout\\endcsname\\quireout=side.txt',
      '\\csname immediate\\endcsname\\csname write\\endcsname\\quireout{x}\\csname immediate\\endcsname\\csname closeout\\endcsname\\quireout',
      '\\begin{document}',
      'Written.',
      '\\end{document}',
      '',
    ].join('\n');
    assert.equal(refusal(splitPreamble(source)!.preamble), null);
    const result = await run(job(source, 'account:3'));
    assert.equal(result.outcome, 'ok');
    // mylatexformat defers the preamble's \openout to each job: the file written differs.
    assert.deepEqual(builds.at(-1), { admitted: false, reason: 'the files it writes differ from a cold compile' });
    assert.ok(!usedFormat(await run(job(source, 'account:3'))));

    const buildsBefore = formats.stats.builds;
    const inline = '\\documentclass{article}\n\\begin{filecontents*}{side.txt}\nx\n\\end{filecontents*}\n\\begin{document}\nInline.\n\\end{document}\n';
    assert.equal((await run(job(inline, 'account:3'))).outcome, 'ok');
    assert.equal(formats.stats.builds, buildsBefore, 'refused before any build');
  });
});

describe('primed preamble formats', () => {
  let workRoot: string;
  let cold: TexRunner;
  let runner: TexRunner;
  let cached: PreambleCache;
  let primed: PrimedFormats;
  const job = (source: string, scope: string): TexJob => ({ source, compiler: 'pdflatex', timeoutMs: 60_000, maxFileBytes: 16 * MB, preamble: { scope, day: DAY } });
  const run = async (j: TexJob, uid = UID) => {
    const result = await cached.run(j, uid);
    await cached.formatsIdle();
    return result;
  };

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-primed-'));
    cold = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() });
    runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() });
    primed = new PrimedFormats(runner.pool, { maxCount: 2 });
    cached = new PreambleCache(runner, { root: defaultImageRoot(), formats: new FormatCache(512 * MB), primed });
  });
  after(async () => {
    await Promise.all([cold.close(), cached.close()]);
    await rm(workRoot, { recursive: true, force: true });
  });

  test('an admitted format has its engine started ahead; the next job takes it, gives the cold pages, and another is started', async () => {
    await run(job(heavy('First.'), 'account:1'));
    assert.equal(primed.size, 1, 'started once the format was admitted');
    const hit = await run(job(heavy('Second, primed.'), 'account:1'));
    assert.equal(primed.stats.hits, 1);
    assert.ok(usedFormat(hit));
    // The primed engine opened no file of the job before its line: the transcript is whole, the body the job's.
    assert.match(hit.log, /^This is pdfTeX[^]*\(\.\/main\.tex[^]*Output written on main\.pdf/);
    const reference = await cold.run(job(heavy('Second, primed.'), 'account:1'), UID);
    assert.ok(pages(hit).equals(pages(reference)));
    assert.equal(hit.passes, reference.passes);
    assert.match(text(hit), /Second, primed\./);
    assert.equal(primed.size, 1, 'the next one is started');
    // The job took two passes (a contents page): the next sandbox starts the second pass's engine too.
    assert.equal(hit.passes, 2);
    assert.deepEqual((await primed.sessions()).map((session) => [session?.engine, session?.next]), [['pdflatex+preamble', true]]);
    const third = await run(job(heavy('Third, both engines ahead.'), 'account:1'));
    const thirdReference = await cold.run(job(heavy('Third, both engines ahead.'), 'account:1'), UID);
    assert.equal(third.passes, 2);
    assert.ok(pages(third).equals(pages(thirdReference)));
    assert.match(text(third), /Third, both engines ahead\./);

    const failed = await run(job(heavy('A \\missingmacro here.'), 'account:1'));
    assert.equal(primed.stats.hits, 3);
    assert.equal(failed.outcome, 'failed');
    assert.deepEqual(/^\.\/main\.tex:(\d+): (.*)$/m.exec(failed.log)?.slice(1, 3), ['14', 'Undefined control sequence.']);
  });

  test('a primed sandbox serves only its own uid and preamble, and the count bound ends the oldest', async () => {
    const hits = primed.stats.hits;
    // Another scope: another key, so no primed sandbox of account 1 is taken.
    const other = await run(job(heavy('Other account.'), 'account:2'));
    assert.equal(other.outcome, 'ok');
    assert.equal(primed.stats.hits, hits);
    assert.equal(primed.size, 2, "account 2's format admitted: its own primed sandbox beside account 1's");
    if (UID !== undefined) {
      // Another slot uid with account 1's preamble: a miss, and a sandbox of its own replaces the oldest.
      const evictions = primed.stats.evictions;
      const elsewhere = await run(job(heavy('Another slot.'), 'account:1'), CONVERTER_UID - 9);
      assert.ok(usedFormat(elsewhere));
      assert.equal(primed.stats.hits, hits);
      assert.equal(primed.size, 2);
      assert.equal(primed.stats.evictions, evictions + 1);
    }
  });
});

describe('preamble keys and refusals', () => {
  test('the preamble ends at the first line beginning with \\begin{document}', () => {
    assert.deepEqual(splitPreamble('\\documentclass{article}\n  \\begin{document}\nx\n'), { preamble: '\\documentclass{article}\n', lines: 1 });
    assert.equal(splitPreamble('\\documentclass{article}\\begin{document}x\\end{document}'), null);
  });

  test('every part of the key matters', () => {
    const base = { scope: 'account:1', day: DAY, engine: 'pdflatex', preamble: '\\documentclass{article}\n', texlive: 'tl' };
    const keys = new Set([
      preambleKey(base),
      preambleKey({ ...base, scope: 'account:2' }),
      preambleKey({ ...base, scope: 'gallery' }),
      preambleKey({ ...base, day: '2026-11-24' }),
      preambleKey({ ...base, engine: 'xelatex' }),
      preambleKey({ ...base, preamble: '\\documentclass{report}\n' }),
      preambleKey({ ...base, texlive: 'tl2' }),
    ]);
    assert.equal(keys.size, 7);
  });

  test('refused preambles', () => {
    assert.equal(refusal('\\documentclass{article}\n\\usepackage{x}\n\\makeatletter\\def\\a{\\{}\\makeatother % }\n'), null);
    assert.equal(refusal('\\documentclass{article}\n\\def\\a{'), 'unbalanced braces');
    assert.equal(refusal('\\documentclass{article}\n\\catcode`\\@=11\n'), 'catcode changes');
    assert.equal(refusal('\\documentclass{article}\n\\edef\\t{\\the\\time}\n'), 'the time of day or random numbers');
    assert.equal(refusal('\\documentclass{article}\n\\immediate\\write18{x}\n'), 'file writes');
    assert.equal(refusal('%&other\n\\documentclass{article}\n'), 'a %& format line');
    assert.equal(refusal('\\documentclass{article}\n\\everyjob{x}\n'), 'format dump controls');
    for (const read of ['\\newread\\r\\openin\\r=main.tex', '\\readline\\r to\\x', '\\read\\r to\\x', '\\edef\\x{\\pdffiledump length 9 {main.tex}}', '\\CatchFileDef\\x{main.tex}{}', '\\lstinputlisting{main.tex}', '\\verbatiminput{notes.txt}', '\\ExplSyntaxOn\\ior_open:Nn \\g_tmpa_ior {main.tex}\\ExplSyntaxOff']) {
      assert.equal(refusal(`\\documentclass{article}\n${read}\n`), 'file reads', read);
    }
    const files = ['defs.tex', 'mystyle.sty', 'myclass.cls', 'chapters/setup.tex', 'logo.png'];
    for (const read of ['\\input{main}', '\\input main.tex', '\\include{main}', '\\input{defs}', '\\input defs ', '\\input{./defs.tex}', '\\usepackage[x]{tikz,mystyle}', '\\RequirePackage{mystyle}', '\\IfFileExists{logo.png}{\\def\\l{1}}{}', '\\InputIfFileExists{chapters/setup}{}{}', '\\import{chapters/}{setup}', '\\input{\\foo}', '\\input\\foo', '\\@@input main.tex']) {
      assert.equal(refusal(`\\documentclass{article}\n${read}\n`, files), 'reads of its own job files', read);
    }
    assert.equal(refusal('\\documentclass[11pt]{myclass}\n', files), 'reads of its own job files');
    assert.equal(refusal('\\documentclass[11pt]{article}\n\\usepackage{tikz}\n\\input{glyphtounicode}\n\\IfFileExists{fontawesome5.sty}{\\usepackage{fontawesome5}}{}\n% \\input{defs}\n', files), null);
  });

  test('a dumped format is kept inflated; one that inflates past the cap (a gzip bomb) is not kept', async () => {
    const format = Buffer.from('W2TX pdftex format bytes '.repeat(1000));
    assert.ok((await inflateFormat(gzipSync(format)))?.equals(format));
    assert.ok((await inflateFormat(format))?.equals(format), 'an uncompressed format passes unchanged');
    // 200 KB of gzip that inflates past the cap: refused without holding the whole of it.
    const bomb = gzipSync(Buffer.alloc(INFLATED_CAP + 1024 * 1024), { level: 9 });
    assert.ok(bomb.length < 1024 * 1024);
    assert.equal(await inflateFormat(bomb), null);
    assert.equal(await inflateFormat(gzipSync(format).subarray(0, 100)), null, 'a truncated format');
  });

  test('the store evicts the least recently used formats by bytes', () => {
    const cache = new FormatCache(10);
    const entry = (size: number): FormatEntry => ({ fmt: Buffer.alloc(size), present: new Set() });
    assert.ok(cache.admit('a', entry(4)));
    assert.ok(cache.admit('b', entry(4)));
    assert.ok(cache.lookup('a', []), 'a used: b is now the oldest');
    assert.ok(cache.admit('c', entry(4)));
    assert.equal(cache.bytes, 8);
    assert.equal(cache.lookup('b', []), undefined);
    assert.ok(cache.lookup('a', []) && cache.lookup('c', []));
    assert.equal(cache.admit('d', entry(11)), false, 'larger than the whole budget');
    assert.equal(cache.stats.evictions, 1);
    cache.refuse('a');
    assert.ok(cache.isRefused('a') && cache.lookup('a', []) === undefined);
    assert.equal(new FormatCache(0).enabled, false);
  });
});
