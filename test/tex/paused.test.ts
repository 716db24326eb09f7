// Paused preambles (paused.ts, paused-cache.ts) with real TeX in the real sandbox: xelatex and
// lualatex documents with one preamble and fresh bodies give each body's text and a cold
// compile's pages, the third from a paused process; a preamble that reads main.tex is never
// paused; a paused process serves one job of its own scope only; the count bound evicts; and
// a paused process that died is replaced by a cold run with the right result.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import type { Compiler } from '../../src/tex/compilers.js';
import type { TexJob } from '../../src/tex/job.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import { PausedPreambles, pausedStats, type PausedStats } from '../../src/tex/caches/paused-cache.js';
import { PreambleCache } from '../../src/tex/caches/preamble-cache.js';
import { FormatCache } from '../../src/tex/caches/format-cache.js';
import { treeUsage } from '../../src/tex/sandbox/proctree.js';
import { TexRunner } from '../../src/tex/runner.js';
import { settledLeftovers, text } from './support.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 6 : undefined;
const MB = 1024 * 1024;
const DAY = '2026-11-27';

const PREAMBLE = '\\documentclass{article}\n\\usepackage{fontspec}\n\\usepackage{unicode-math}\n\\setmathfont{Latin Modern Math}\n% ünïcödé in a comment\n';
const doc = (body: string, preamble = PREAMBLE) => `${preamble}\\begin{document}\n${body}\n\\end{document}\n`;
const words = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('paused preambles', () => {
  let workRoot: string;
  let runner: TexRunner;
  let cold: TexRunner;
  let paused: PausedPreambles;
  let stats: PausedStats;
  const job = (source: string, compiler: Compiler, scope = 'account:1', extra: Partial<TexJob> = {}): TexJob => ({
    source,
    compiler,
    timeoutMs: 60_000,
    maxFileBytes: 16 * MB,
    preamble: { scope, day: DAY },
    ...extra,
  });
  const run = async (j: TexJob) => {
    const result = await paused.run(j, UID);
    await paused.idle();
    return result;
  };
  const make = (maxCount: number, maxBytes = 4096 * MB, sweepMs = 60_000) => {
    stats = pausedStats();
    const luaCache = () => prepareLuaCache(workRoot, defaultImageRoot());
    runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache });
    paused = new PausedPreambles(new PreambleCache(runner, { root: defaultImageRoot(), formats: new FormatCache(0) }), runner, { maxCount, maxBytes, isolate: true, root: defaultImageRoot(), stats, sweepMs });
  };

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-paused-'));
    cold = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
    make(4);
  });
  after(async () => {
    await Promise.all([cold.close(), paused.close()]);
    assert.equal(await settledLeftovers(UID), '', 'no process of the uid survives');
    await rm(workRoot, { recursive: true, force: true });
  });

  for (const compiler of ['xelatex', 'lualatex'] as const) {
    test(`${compiler}: three bodies, one preamble: each its own text and a cold compile's pages, the third paused`, { timeout: 180_000 }, async () => {
      const bodies = ['First body, alpha. \\(x^2 + y\\)', 'Second body, beta.\n\n\\newpage Page two.', 'Third body, gamma \\(\\alpha\\). ü\\label{g}\n\n\\newpage Two, see page \\pageref{g}\n\n\\newpage Three.'];
      const results = [];
      for (const body of bodies) results.push(await run(job(doc(body), compiler)));
      assert.deepEqual(
        results.map((r) => [r.outcome, r.warm]),
        [
          ['ok', undefined],
          ['ok', undefined],
          ['ok', 'paused'],
        ],
      );
      for (const [i, body] of bodies.entries()) {
        const reference = await cold.run(job(doc(body), compiler), UID);
        assert.equal(words(text(results[i]!.pdf)), words(text(reference.pdf)), `body ${i + 1}: the cold compile's text`);
        assert.equal(results[i]!.pages, reference.pages);
      }
      assert.match(text(results[2]!.pdf), /Third body, gamma/);
      assert.equal(results[2]!.pages, 3);
      assert.equal(results[2]!.passes, 2, 'the rerun for the reference runs cold');
      assert.match(text(results[2]!.pdf), /see page 1/);

      // A body error is reported on its line of main.tex, as a cold compile does.
      const broken = await run(job(doc('Fine line.\n\\undefinedmacro'), compiler));
      assert.equal(broken.outcome, 'failed');
      assert.equal(broken.warm, 'paused');
      assert.match(broken.log, /^\.\/main\.tex:8: Undefined control sequence/m);

      if (compiler === 'lualatex') {
        // The font map was read before the preamble, as a warm engine reads it before its wait
        // (job.ts LUA_AHEAD): a cold pass reads it at its first page and names it in its transcript.
        const single = await run(job(doc('One page.'), compiler));
        assert.equal(single.warm, 'paused');
        const unwarmed = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), warm: false, luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
        try {
          const reference = await unwarmed.run(job(doc('One page.'), compiler), UID);
          assert.equal(words(text(single.pdf)), words(text(reference.pdf)));
          assert.match(reference.log, /pdftex\.map/);
          assert.doesNotMatch(single.log, /pdftex\.map/);
        } finally {
          await unwarmed.close();
        }
      }
    });
  }

  test('pdflatex PDF/A: the third job of one preamble and metadata is paused, passes Preflight, carries its own text', { timeout: 180_000 }, async () => {
    const preamble = '\\documentclass{article}\n\\usepackage{lmodern}\n';
    const pdfa = (body: string, title: string) => job(doc(body, preamble), 'pdflatex', 'account:1', { output: { pdfStandard: 'a-1b', metadata: { title } } });
    const results = [];
    for (const body of ['Archived one.', 'Archived two.', 'Archived three.']) results.push(await run(pdfa(body, 'Ledger')));
    assert.deepEqual(
      results.map((r) => [r.outcome, r.warm, r.passes]),
      [
        ['ok', undefined, 1],
        ['ok', undefined, 1],
        ['ok', 'paused', 1],
      ],
      results.map((r) => r.reasons ?? '').join('\n'),
    );
    assert.match(text(results[2]!.pdf), /Archived three\./);
    assert.doesNotMatch(text(results[2]!.pdf), /Archived (one|two)/);
    const xmp = results[2]!.pdf!.toString('latin1');
    assert.match(xmp, /<pdfaid:part>1<\/pdfaid:part>/);
    assert.match(xmp, /<rdf:li xml:lang="x-default">Ledger<\/rdf:li>/, 'the title pdfx read while paused is the job\'s');

    // Other metadata is another preamble to pdfx: never the paused process made for "Ledger".
    const other = await run(pdfa('Another title.', 'Journal'));
    assert.equal(other.outcome, 'ok', other.reasons?.join('\n'));
    assert.equal(other.warm, undefined);
    assert.match(other.pdf!.toString('latin1'), /<rdf:li xml:lang="x-default">Journal<\/rdf:li>/);
    // Without PDF/A, pdflatex stays with the format cache: nothing paused.
    const plain = await run(job(doc('Plain.', preamble), 'pdflatex'));
    assert.equal(plain.warm, undefined);
  });

  test('a paused process serves one job, of its own scope only', { timeout: 180_000 }, async () => {
    const before = stats.hits;
    const a = await run(job(doc('Scope test one.'), 'xelatex'));
    assert.equal(a.warm, 'paused');
    // Another account with the same preamble: never the first account's process.
    const other = await run(job(doc('Another account.'), 'xelatex', 'account:2'));
    assert.equal(other.warm, undefined);
    assert.match(text(other.pdf), /Another account/);
    assert.equal(stats.hits, before + 1);
    // Each process is used once: one waits again (a new one), none is the one a job had.
    const xelatex = () => paused.sessions().filter((s) => s.compiler === 'xelatex' && s.uid === UID);
    const sessions = xelatex().map((s) => s.session);
    assert.equal(sessions.length, 1);
    const b = await paused.run(job(doc('Scope test two.'), 'xelatex'), UID);
    assert.equal(b.warm, 'paused');
    await paused.idle();
    assert.equal(xelatex().length, 1);
    assert.notEqual(xelatex()[0]!.session, sessions[0], 'a new process waits, not the one a job had');
  });

  test('a preamble that reads main.tex (or any file) is never paused', { timeout: 180_000 }, async () => {
    const reading = '\\documentclass{article}\n\\usepackage{fontspec}\n\\IfFileExists{main.tex}{}{}\n';
    const opening = '\\documentclass{article}\n\\usepackage{fontspec}\n\\newread\\r\\openin\\r=main.tex \\closein\\r\n';
    for (const preamble of [reading, opening]) {
      const builds = stats.builds;
      for (const body of ['a', 'b', 'c']) {
        const result = await run(job(doc(body, preamble), 'xelatex'));
        assert.equal(result.outcome, 'ok', result.log.slice(-1000));
        assert.equal(result.warm, undefined);
      }
      assert.equal(stats.builds, builds, 'nothing built');
    }
    // Nor a job bringing a file its preamble might have looked for.
    const withCfg = await run(job(doc('With a cfg.'), 'xelatex', 'account:1', { files: [{ name: 'fontspec.cfg', data: Buffer.from('% nothing\n') }] }));
    assert.equal(withCfg.warm, undefined);
    // A body file is placed before the go-line.
    const withInput = await run(job(doc('\\input{chapter}'), 'xelatex', 'account:1', { files: [{ name: 'chapter.tex', data: Buffer.from('From the chapter file.\n') }] }));
    assert.equal(withInput.warm, 'paused');
    assert.match(text(withInput.pdf), /From the chapter file/);
  });

  test('a paused process that died is replaced by a cold run with the right result', { timeout: 180_000 }, async () => {
    await paused.idle();
    const waiting = paused.sessions().find((s) => s.uid === UID && s.compiler === 'xelatex' && s.session);
    assert.ok(waiting?.session?.pid);
    // A started sandbox may not have exec'd its engine yet (seen on a loaded machine): wait for it.
    const pid = waiting.session.pid;
    const engine = async () => {
      const tree = (await treeUsage([pid])).get(pid)!;
      return { tree, tex: tree.processes.filter((p) => /^(xelatex|xetex|lualatex|luatex)$/.test(p.comm)) };
    };
    let { tree, tex } = await engine();
    for (let i = 0; i < 300 && tex.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ({ tree, tex } = await engine());
    }
    assert.equal(tex.length, 1, JSON.stringify(tree.processes));
    process.kill(tex[0]!.pid, 'SIGKILL');
    const fallbacks = stats.fallbacks;
    const result = await run(job(doc('After the kill.'), 'xelatex'));
    assert.equal(result.outcome, 'ok');
    assert.equal(result.warm, undefined);
    assert.match(text(result.pdf), /After the kill/);
    assert.equal(stats.fallbacks, fallbacks + 1);
  });

  test('the count bound evicts the oldest waiting process', { timeout: 240_000 }, async () => {
    await paused.close();
    make(1);
    for (const body of ['a', 'b']) await run(job(doc(body), 'xelatex', 'account:7'));
    assert.equal(paused.sessions().length, 1);
    const first = paused.sessions()[0]!.session;
    for (const body of ['a', 'b']) await run(job(doc(body), 'xelatex', 'account:8'));
    assert.equal(paused.sessions().length, 1);
    assert.notEqual(paused.sessions()[0]!.session, first);
    assert.equal(stats.evictions, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(first?.alive, false, 'the evicted sandbox is ended');
    const seven = await run(job(doc('c'), 'xelatex', 'account:7'));
    assert.equal(seven.warm, undefined, 'its preamble runs cold');
    assert.equal(stats.misses, 1);
  });

  test('the memory bound evicts, and measures what waits', { timeout: 240_000 }, async () => {
    await paused.close();
    make(4, 1, 200);
    await paused.start();
    for (const body of ['a', 'b']) await run(job(doc(body), 'xelatex', 'account:9'));
    const until = Date.now() + 10_000;
    while (paused.sessions().length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(paused.sessions().length, 0, 'one byte holds no process');
    assert.equal(stats.evictions, 1);
    assert.equal(stats.waiting, 0);
  });
});
