// Warm engines (session.ts, runner.ts): a TeX process started ahead of time (with xelatex, a
// warm xdvipdfmx beside it) gives the same pages and text as a cold run with every engine,
// runs under the job's limits and timeout, and serves one job at most.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { settledLeftovers, text } from './support.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import { XDV_DRIVER, type TexJob } from '../../src/tex/job.js';
import { rerunLikely, setsFontMap } from '../../src/tex/pass-loop.js';
import { TexRunner } from '../../src/tex/runner.js';
import { Session } from '../../src/tex/sandbox/session.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and the runner test's uid.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 2 : undefined;
const MB = 1024 * 1024;
/** A warm engine's transcript shows the line it waited for. */
const WARM_MARK = '\\read16 to\\x \\let\\x\\undefined\\nonstopmode';

const doc = (body: string, preamble = '') => `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`;

describe('warm engines', () => {
  let workRoot: string;
  let warm: TexRunner;
  let cold: TexRunner;
  const job = (source: string, extra: Partial<TexJob> = {}): TexJob => ({
    source,
    compiler: 'pdflatex',
    timeoutMs: 20_000,
    maxFileBytes: 8 * MB,
    ...extra,
  });
  /** A job on a runner whose sandbox for `compiler` is already warm (one job of it ran before). */
  const warmed = async (compiler: TexJob['compiler']) => {
    await warm.run(job(doc('warm-up'), { compiler }), UID);
  };

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-warm-'));
    warm = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
    cold = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), warm: false, luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
  });
  after(async () => {
    await Promise.all([warm.close(), cold.close()]);
    await rm(workRoot, { recursive: true, force: true });
  });

  const documents = [
    // \\x, the macro a warm engine reads its line into, is free for the document.
    doc('Hello \\ifdefined\\x DEFINED\\else UNDEFINED\\fi{} from \\jobname.', '\\newcommand\\x{x}'),
    doc('\\tableofcontents\\section{One}\\label{one}See \\ref{one} on page \\pageref{one}.\\newpage\\section{Two}Text.'),
  ];

  for (const compiler of ['pdflatex', 'xelatex', 'lualatex'] as const) {
    test(`${compiler}: warm results equal cold ones`, async () => {
      for (const source of documents) {
        await warmed(compiler);
        const hot = await warm.run(job(source, { compiler }), UID);
        const ref = await cold.run(job(source, { compiler }), UID);
        assert.equal(hot.outcome, 'ok', hot.log.slice(-500));
        assert.equal(ref.outcome, 'ok', ref.log.slice(-500));
        assert.equal(hot.pages, ref.pages);
        assert.equal(hot.passes, ref.passes);
        assert.equal(text(hot.pdf), text(ref.pdf));
        assert.ok(!ref.log.includes(WARM_MARK));
        // The last pass too: a second pass starts ahead of time while the first runs.
        assert.ok(hot.log.includes(WARM_MARK), 'a warm engine ran the last pass');
      }
      assert.match(text((await warm.run(job(documents[0]!, { compiler }), UID)).pdf), /Hello DEFINED from main\./);
    });
  }

  test("lualatex: a warm engine holds its first font before its line; a second pass's engine does not", async () => {
    const loaded = (log: string) => log.indexOf('Font names database loaded');
    await warmed('lualatex');
    const one = await warm.run(job(documents[0]!, { compiler: 'lualatex' }), UID);
    assert.equal(one.passes, 1);
    assert.ok(loaded(one.log) >= 0 && loaded(one.log) < one.log.indexOf('(./main.tex'), 'loaded before the document');
    await warmed('lualatex');
    const two = await warm.run(job(documents[1]!, { compiler: 'lualatex' }), UID);
    assert.equal(two.passes, 2);
    // The transcript is the last pass's, whole: its engine (started during pass 1) loaded the font inside the document.
    assert.match(two.log, /^This is LuaHBTeX/);
    assert.ok(loaded(two.log) > two.log.indexOf('(./main.tex'), 'loaded by the document');
  });

  test('xelatex: an XDV far larger than a pipe buffer reaches the warm xdvipdfmx whole', async () => {
    const long = doc(Array.from({ length: 40 }, (_, i) => `\\section{Part ${i}}${'Words of text in a long paragraph. '.repeat(60)}\\newpage`).join('\n'));
    await warmed('xelatex');
    const hot = await warm.run(job(long, { compiler: 'xelatex' }), UID);
    const ref = await cold.run(job(long, { compiler: 'xelatex' }), UID);
    assert.equal(hot.outcome, 'ok', hot.log.slice(-500));
    assert.ok(hot.log.includes(WARM_MARK), 'the warm engine and its xdvipdfmx ran the pass');
    assert.equal(hot.pages, ref.pages);
    assert.ok(hot.pages! >= 40, `${hot.pages} pages`);
    assert.equal(text(hot.pdf), text(ref.pdf));
  });

  test('a warm engine whose engine the job does not use is ended, and the job runs cold', async () => {
    await warmed('pdflatex');
    const result = await warm.run(job(doc('X'), { compiler: 'xelatex' }), UID);
    assert.equal(result.outcome, 'ok');
    assert.ok(!result.log.includes(WARM_MARK));
    assert.match(text(result.pdf), /X/);
  });

  test("a warm engine runs under the job's file size cap", async () => {
    await warmed('pdflatex');
    const result = await warm.run(
      job(
        doc(
          '\\newwrite\\w\\immediate\\openout\\w=big.txt\\def\\a{xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}' +
            '\\count1=0 \\loop\\immediate\\write\\w{\\a\\a\\a\\a\\a\\a\\a\\a}\\advance\\count1 1 \\ifnum\\count1<1000000 \\repeat',
        ),
        { maxFileBytes: 2 * MB },
      ),
      UID,
    );
    assert.equal(result.outcome, 'file_too_large', `${result.outcome} ${result.file} ${result.log.slice(-300)}`);
    assert.equal(result.file, 'big.txt');
  });

  test('a warm engine is killed at the timeout and never sees the next job', async () => {
    await warmed('pdflatex');
    // The first job waits for a file only the second job brings.
    const waiting = doc('\\loop\\IfFileExists{second.tex}{\\def\\again{0}SAW-SECOND}{\\def\\again{1}}\\ifnum\\again=1 \\repeat');
    const started = Date.now();
    const first = await warm.run(job(waiting, { timeoutMs: 2000 }), UID);
    assert.equal(first.outcome, 'timeout');
    assert.ok(Date.now() - started < 6000, 'killed promptly');
    const second = await warm.run(job(doc('\\input{second}'), { files: [{ name: 'second.tex', data: Buffer.from('SECOND-JOB') }] }), UID);
    assert.equal(second.outcome, 'ok');
    assert.match(text(second.pdf), /SECOND-JOB/);
    assert.doesNotMatch(first.log, /SAW-SECOND/);
    await warm.close();
    assert.equal(await settledLeftovers(UID), '', 'no process of either job is left');
    warm = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
  });

  test('a document that sets its own font maps runs cold (a warm pdflatex or lualatex has read pdftex.map)', async () => {
    assert.equal(setsFontMap([doc('x', '\\pdfmapfile{mine.map}')]), true);
    assert.equal(setsFontMap(['\\pdfmapline{=ptmr8r Times-Roman}']), true);
    assert.equal(setsFontMap([doc('\\pdfmapping')]), false);
    assert.equal(setsFontMap(['\\pdfextension mapfile {mine.map}']), true);
    await warmed('pdflatex');
    const own = await warm.run(job(doc('Own map', '\\pdfmapfile{+pdftex.map}')), UID);
    assert.equal(own.outcome, 'ok', own.log.slice(-500));
    assert.ok(!own.log.includes(WARM_MARK), 'ran cold');
    await warmed('pdflatex');
    const plain = await warm.run(job(doc('Plain')), UID);
    assert.ok(plain.log.includes(WARM_MARK), 'ran warm');
    assert.match(text(plain.pdf), /Plain/);
  });

  test('a second pass is started ahead only for documents that read back their own output without helpers', () => {
    assert.equal(rerunLikely([doc('\\tableofcontents x')]), true);
    assert.equal(rerunLikely(['x', 'see \\ref{a}']), true);
    assert.equal(rerunLikely([doc('plain')]), false);
    assert.equal(rerunLikely([doc('\\tableofcontents \\cite{k}')]), false);
    assert.equal(rerunLikely([doc('\\reference')]), false);
  });

  test('the driver gives a warm process one line, once, under the limits it was told', async () => {
    const root = await mkdtemp(join(workRoot, 'session-'));
    await chmod(workRoot, 0o711);
    await chmod(root, 0o711);
    const session = await Session.open(root, UID, { isolate: true, root: defaultImageRoot(), env: {} });
    try {
      // A stand-in engine: prints its file size limit once it got its line.
      await session.startEngine('probe', ['sh', '-c', 'read line; echo "warm:$line:$(ulimit -f)"']);
      assert.equal(session.engine, 'probe');
      const limits = { cpuSeconds: 5, fileBytes: 512 * 1024, memoryBytes: 1024 * MB, processes: 16 };
      // A pass answers with its code; what it printed is read apart (and reading it leaves a warm engine waiting).
      const go = async (again = false) => {
        const pass = await session.go(limits, ['echo', 'cold'], again);
        assert.equal(pass.output, '');
        return { code: pass.code, output: await session.passOutput() };
      };
      const first = await go();
      assert.deepEqual(first, { code: 0, output: 'warm::1024\n' });
      assert.equal(session.engine, undefined);
      // Used once: a second pass runs cold.
      assert.deepEqual(await go(), { code: 0, output: 'cold\n' });
      // `again`: the same command starts anew, ahead of the next pass, while this one runs.
      // Only that second engine has QUIRE_AGAIN (it must not preload what opens the first's transcript).
      await session.startEngine('probe', ['sh', '-c', 'read line; echo "pass:$$:${QUIRE_AGAIN-none}"']);
      const one = await go(true);
      assert.equal(session.engine, 'probe');
      const two = await go();
      assert.match(one.output, /^pass:\d+:none\n$/);
      assert.match(two.output, /^pass:\d+:1\n$/);
      assert.notEqual(one.output, two.output, 'two processes, one line each');
      assert.deepEqual(await go(), { code: 0, output: 'cold\n' });
      // A second engine started ahead beside the warm one: `again` makes it the warm one, with
      // its own line and the job's limits; the driver starts none anew.
      await session.startEngine('probe', ['sh', '-c', 'read line; echo "pass:$$:${QUIRE_AGAIN-none}:$(ulimit -f)"']);
      await session.startNext();
      assert.equal(session.next, true);
      const early = await go(true);
      assert.equal(session.engine, 'probe');
      const late = await go();
      assert.match(early.output, /^pass:\d+:none:1024\n$/);
      assert.match(late.output, /^pass:\d+:1:1024\n$/);
      assert.notEqual(early.output.split(':')[1], late.output.split(':')[1], 'two processes');
      assert.deepEqual(await go(), { code: 0, output: 'cold\n' });
      // Any other command ends both; beside a warm xdvipdfmx none is started.
      await session.startEngine('probe', ['sh', '-c', 'read line; echo late > late1.txt']);
      await session.startNext();
      // (The pattern's brackets keep this command's own line from matching.)
      const waiting = ['sh', '-c', 'sleep 0.2; grep -l "rea[d] line" /proc/[0-9]*/cmdline 2>/dev/null | wc -l'];
      assert.deepEqual(await session.run(waiting), { code: 0, output: '0\n' });
      assert.equal(session.next, false);
      await session.startEngine('probe', ['sh', '-c', 'read line; echo x'], ['sh', '-c', 'cat >/dev/null']);
      await session.startNext();
      assert.equal(session.next, false);
      await session.run(['true']);
      // An attack: a pass (a lualatex document can io.open anything) writes the next pass's line
      // itself, through the driver's pipe in /proc, before that pass's go. The engine it starts
      // already runs under the job's limits (canary: its file size limit, 1024 blocks).
      const attack = [
        'sh',
        '-c',
        'if [ -n "${QUIRE_AGAIN-}" ]; then read line; echo "$(ulimit -f)" > again.txt; else read line; sleep 0.5; echo early > "/proc/$PPID/fd/3"; sleep 0.5; cat again.txt; fi',
      ];
      await session.startEngine('probe', attack);
      assert.deepEqual(await go(true), { code: 0, output: '1024\n' });
      await session.run(['rm', 'again.txt']);
      // A warm process that died before its job: the pass runs cold too.
      await session.startEngine('dead', ['sh', '-c', 'exit 7']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await go(), { code: 0, output: 'cold\n' });
      // xelatex's warm xdvipdfmx: the engine's output driver hands it the XDV and answers with
      // its exit code; it runs under the job's limits too.
      const engine = ['sh', '-c', `read line; echo xdv-bytes | ${XDV_DRIVER} -o main.pdf; echo "driver:$?"`];
      await session.startEngine('probe', engine, ['sh', '-c', 'cat >got.txt; echo "limit:$(ulimit -f)" >>got.txt; exit 3']);
      assert.deepEqual(await go(), { code: 0, output: 'driver:3\n' });
      assert.deepEqual(await session.run(['cat', 'got.txt']), { code: 0, output: 'xdv-bytes\nlimit:1024\n' });
      // An engine that ships nothing: its xdvipdfmx is ended with the pass, having read nothing.
      await session.startEngine('probe', ['sh', '-c', 'read line; echo no-pages'], ['sh', '-c', 'read x; echo "$x" >late-pdf.txt']);
      assert.deepEqual(await go(), { code: 0, output: 'no-pages\n' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await session.run(['sh', '-c', 'ls; ls /tmp/.quire-out.* | grep -c -e xdv -e status -e pdfpid']), { code: 1, output: 'got.txt\n0\n' });
      await session.run(['rm', 'got.txt']);
      // Any other command ends an unused warm process first.
      await session.startEngine('probe', ['sh', '-c', 'read line; echo late > late.txt']);
      assert.deepEqual(await session.run(['sh', '-c', 'sleep 0.2; ls']), { code: 0, output: '' });
      assert.deepEqual(await session.run(['sh', '-c', 'ls']), { code: 0, output: '' });
    } finally {
      await session.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
