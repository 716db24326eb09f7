// The TeX runner against real engines: passes, bibliographies, an index, and hostile
// documents. Every hostile case asserts that nothing leaked (pdftotext), nothing ran and no
// process or workspace is left behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { leftovers, text } from './support.js';
import { JobFileNameError } from '../../src/tex/errors.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import type { TexJob } from '../../src/tex/job.js';
import { TexRunner } from '../../src/tex/runner.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { probeSandbox } from '../../src/tex/sandbox/sandbox.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range, so no compile slot of another test process shares it.
// Not CONVERTER_UID either: SVG conversions of tests running in parallel would count as leftovers.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 1 : undefined;
const MB = 1024 * 1024;

const doc = (body: string, preamble = '') =>
  `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`;

describe('TeX runner', () => {
  let dataDir: string;
  let workRoot: string;
  let runner: TexRunner;
  // Without a warm sandbox, so any process of the job's uid after a job is a leftover.
  let cold: TexRunner;
  const run = (source: string, extra: Partial<TexJob> = {}, using = () => runner) =>
    using().run({ source, compiler: 'pdflatex', timeoutMs: 20_000, maxFileBytes: 8 * MB, ...extra }, UID);

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quire-runner-'));
    // Job uids must reach their workspace: the root lives in the world-traversable tmpdir.
    workRoot = await mkdtemp(join(tmpdir(), 'quire-jobs-'));
    runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
    cold = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), warm: false });
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await rm(workRoot, { recursive: true, force: true });
  });

  test('the sandbox probe passes on this machine', () => {
    assert.equal(probeSandbox(UID, defaultImageRoot()), null);
  });

  test('a one-page document takes one pass with every engine', async () => {
    for (const compiler of ['pdflatex', 'xelatex', 'lualatex'] as const) {
      const result = await run(doc('Hello from the sandbox.'), { compiler });
      assert.equal(result.outcome, 'ok', `${compiler}: ${result.log.slice(-400)}`);
      assert.equal(result.passes, 1, compiler);
      assert.equal(result.pages, 1);
      assert.match(text(result.pdf), /Hello from the sandbox\./);
    }
  });

  test('a table of contents and a \\ref resolve in a second pass', async () => {
    const result = await run(doc('\\tableofcontents\n\\section{Alpha}\\label{sec:a}\nSee section~\\ref{sec:a} on page~\\pageref{sec:a}.'));
    assert.equal(result.outcome, 'ok');
    assert.equal(result.passes, 2);
    const out = text(result.pdf);
    assert.match(out, /See section 1 on page 1\./);
    assert.match(out, /1\s+Alpha\s+1/);
  });

  // pdfx writes pdfa.xmpi with a fresh InstanceID every pass, then reads it back in the same pass.
  const scratch = (first: 'write' | 'read') => {
    const write = '\\immediate\\openout9=scratch.dat \\immediate\\write9{\\pdfuniformdeviate 1000000}\\immediate\\closeout9';
    const read = '\\InputIfFileExists{scratch.dat}{}{}';
    return doc(`Scratch: ${first === 'write' ? `${write}\n${read}` : `${read}\n${write}`}`);
  };

  test('a file each pass writes before reading it forces no rerun; one read before it changes does', async () => {
    // The file is there from the start, as a job file: the first pass already reads an old copy.
    const files = [{ name: 'scratch.dat', data: Buffer.from('0\n') }];
    const written = await run(scratch('write'), { files });
    assert.equal(written.outcome, 'ok', written.log.slice(-400));
    assert.equal(written.passes, 1);
    const readFirst = await run(scratch('read'), { files });
    assert.equal(readFirst.outcome, 'ok', readFirst.log.slice(-400));
    assert.equal(readFirst.passes, 5, 'a file that changes every pass reruns to the cap');
  });

  test('hyperref without sections takes one pass; with sections, a second for the bookmarks', async () => {
    const plain = await run(doc('No sections here.', '\\usepackage{hyperref}'));
    assert.equal(plain.outcome, 'ok', plain.log.slice(-400));
    assert.equal(plain.passes, 1, 'an empty .out reads as a missing one: nothing to rerun for');
    const sections = await run(doc('\\section{Alpha}\nText.', '\\usepackage{hyperref}'));
    assert.equal(sections.outcome, 'ok', sections.log.slice(-400));
    assert.equal(sections.passes, 2);
    const file = join(dataDir, 'outlined.pdf');
    await writeFile(file, sections.pdf!);
    const { outlines } = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=outlines', file], { encoding: 'utf8' })) as { outlines: Array<{ title: string }> };
    assert.deepEqual(outlines.map((o) => o.title), ['Alpha'], 'the bookmark made it');
  });

  const bib = String.raw`\begin{filecontents*}[overwrite]{refs.bib}
@book{knuth, author = {Donald E. Knuth}, title = {The TeXbook}, year = {1984}, publisher = {Addison-Wesley}}
\end{filecontents*}
`;

  test('bibtex runs for a \\bibliography given inline through filecontents', async () => {
    const result = await run(bib + doc('As shown in \\cite{knuth}.\n\\bibliographystyle{plain}\n\\bibliography{refs}'));
    assert.equal(result.outcome, 'ok', result.log.slice(-500));
    const out = text(result.pdf);
    assert.match(out, /As shown in \[1\]\./);
    assert.match(out, /The TeXbook/);
  });

  test('biber runs for biblatex', async () => {
    const result = await run(
      bib + doc('As shown in \\cite{knuth}.\n\\printbibliography', '\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}'),
    );
    assert.equal(result.outcome, 'ok', result.log.slice(-500));
    const out = text(result.pdf);
    assert.match(out, /As shown in \[1\]\./);
    assert.match(out, /The TeXbook/);
  });

  test('makeindex runs when an index is made', async () => {
    const result = await run(doc('Zebras\\index{zebra} and aardvarks\\index{aardvark}.\n\\printindex', '\\usepackage{makeidx}\n\\makeindex'));
    assert.equal(result.outcome, 'ok', result.log.slice(-500));
    assert.match(text(result.pdf), /aardvark, 1[\s\S]*zebra, 1/);
  });

  test('a LaTeX error fails with the transcript', async () => {
    const result = await run(doc('\\undefinedcommand'));
    assert.equal(result.outcome, 'failed');
    assert.match(result.log, /main\.tex:4: Undefined control sequence/);
  });

  test("job files cannot take the job's own names or leave the workspace", async () => {
    for (const name of ['main.pdf', 'main.tex', 'main.aux', 'main.log', 'preview.pdf', 'main.attachments/x.pdf', '../x.png', '/etc/x', 'a\u0007.tex', '.hidden.png', 'figures/.quire-pre.fmt']) {
      await assert.rejects(run(doc('x'), { files: [{ name, data: Buffer.from('x') }] }), (err: unknown) => {
        assert.ok(err instanceof JobFileNameError, name);
        assert.equal(err.file, name);
        return true;
      });
    }
  });

  describe('hostile documents', () => {
    const passwd = /root:x:0:0|nobody:x:/;

    test('\\input of /etc/passwd is refused and nothing leaks', async () => {
      const result = await run(doc('\\input{/etc/passwd}'));
      assert.equal(result.outcome, 'failed');
      assert.doesNotMatch(result.log, passwd);
    });

    test('\\openin and \\read of a system file read nothing', async () => {
      const result = await run(
        doc('\\newread\\myread\\openin\\myread=/etc/passwd\\relax\\ifeof\\myread NOFILE\\else\\read\\myread to\\x GOT:\\x\\fi\\closein\\myread'),
      );
      assert.equal(result.outcome, 'ok', result.log.slice(-300));
      const out = text(result.pdf);
      assert.match(out, /NOFILE/);
      assert.doesNotMatch(out, passwd);
    });

    test('\\verbatiminput and \\lstinputlisting of system files leak nothing', async () => {
      for (const [pkg, cmd] of [
        ['verbatim', '\\verbatiminput{/etc/passwd}'],
        ['listings', '\\lstinputlisting{/etc/passwd}'],
        ['listings', '\\lstinputlisting{/proc/self/environ}'],
      ]) {
        const result = await run(doc(`before ${cmd} after`, `\\usepackage{${pkg}}`));
        if (result.pdf) assert.doesNotMatch(text(result.pdf), passwd);
        assert.doesNotMatch(result.log, passwd);
        // TeX Live 2026 reads /proc/self/environ: the sandbox's own environment (--clearenv, then
        // only what the runner sets) may show, nothing of the service's.
        assert.doesNotMatch(result.log, /QUIRE_(?!OUT=)|AWS_|NODE_|PATH=\/usr\/local|HOME=\/root/);
      }
    });

    test('\\includegraphics of a system path is refused', async () => {
      const result = await run(doc('\\includegraphics{/etc/hostname}', '\\usepackage{graphicx}'));
      assert.equal(result.outcome, 'failed');
      assert.match(result.log, /not found|openin_any/);
    });

    test('\\write18 and \\immediate\\write18 do not run', async () => {
      const result = await run(
        doc(
          '\\write18{echo pwned > pwned.tex}\\immediate\\write18{echo pwned > pwned.tex}\nx\\newpage y\n' +
            '\\IfFileExists{pwned.tex}{RAN}{NOTRUN}',
        ),
      );
      assert.equal(result.outcome, 'ok');
      const out = text(result.pdf);
      assert.match(out, /NOTRUN/);
      assert.doesNotMatch(out, /RAN|pwned/);
    });

    test('\\openout outside the workspace writes nothing outside', async () => {
      const target = join(tmpdir(), `quire-escape-${process.pid}.txt`);
      const result = await run(
        doc(`\\newwrite\\w\\immediate\\openout\\w=${target}\\immediate\\write\\w{x}\\immediate\\closeout\\w
\\immediate\\openout\\w=../escape.txt\\immediate\\write\\w{x}\\immediate\\closeout\\w done`),
      );
      assert.ok(result.outcome === 'ok' || result.outcome === 'failed');
      assert.equal(existsSync(target), false);
      assert.equal(existsSync(join(workRoot, 'escape.txt')), false);
      assert.equal(existsSync(join(dataDir, 'escape.txt')), false);
    });

    test('lualatex cannot execute, popen, read system files, open sockets or see the environment', async () => {
      // Written to a file first so TeX does not expand the Lua (~ is active in LaTeX).
      const lua = String.raw`\begin{filecontents*}[overwrite]{probe.lua}
local ok, r = pcall(function() return os.execute("echo pwned > pwned.txt") end)
tex.print("EXEC:" .. tostring(ok and r))
local ok2, p = pcall(function() return io.popen("id") end)
tex.print("POPEN:" .. tostring(ok2 and p ~= nil))
local f = io.open("/etc/passwd", "r")
tex.print("PASSWD:" .. (f and f:read("*a") or "none"))
local h = io.open("/etc/hostname", "r")
tex.print("HOST:" .. (h and "read" or "none"))
local sok = pcall(require, "socket")
tex.print("SOCKET:" .. tostring(sok))
tex.print("ENV:" .. tostring(os.getenv("QUIRE_SECRET")) .. tostring(os.getenv("HOSTNAME")))
local w = io.open("pwned.txt", "r")
tex.print("WROTE:" .. (w and "yes" or "no"))
\end{filecontents*}
`;
      const result = await run(lua + doc('\\directlua{dofile("probe.lua")}'), { compiler: 'lualatex' });
      assert.equal(result.outcome, 'ok', result.log.slice(-600));
      const out = text(result.pdf).replace(/\s+/g, ' ');
      assert.doesNotMatch(out, passwd);
      assert.match(out, /PASSWD:none/);
      assert.match(out, /HOST:none/);
      assert.match(out, /POPEN:false/);
      assert.match(out, /SOCKET:false/);
      assert.match(out, /ENV:nil-? ?nil/);
      assert.match(out, /WROTE:no/);
      assert.doesNotMatch(out, /EXEC:(0|true)/);
    });

    test('an infinite loop is killed at the timeout and leaves no process behind', async () => {
      const started = Date.now();
      await runner.close();
      const result = await run(doc('\\def\\loop{\\loop}\\loop'), { timeoutMs: 2000 }, () => cold);
      assert.equal(result.outcome, 'timeout');
      assert.ok(Date.now() - started < 6000, 'killed promptly');
      assert.equal(leftovers(UID), '', 'no process of the job is left');
    });

    test('a document writing a huge file is stopped at the file size cap', async () => {
      const result = await run(
        doc(
          '\\newwrite\\w\\immediate\\openout\\w=big.txt\\def\\a{xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}' +
            '\\count1=0 \\loop\\immediate\\write\\w{\\a\\a\\a\\a\\a\\a\\a\\a}\\advance\\count1 1 \\ifnum\\count1<1000000 \\repeat',
        ),
        { maxFileBytes: 2 * MB },
        () => cold,
      );
      assert.equal(result.outcome, 'file_too_large', `${result.outcome} ${result.file} ${result.log.slice(-300)}`);
      assert.equal(result.file, 'big.txt');
      assert.equal(leftovers(UID), '', 'no process of the job is left');
    });

    test('a PDF over the size cap is stopped', async () => {
      const result = await run(
        '\\pdfcompresslevel=0 \\pdfobjcompresslevel=0\n' +
          doc(
            '\\def\\a{0123456789012345678901234567890123456789012345678901234567890123}\\edef\\b{\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a}' +
              '\\count1=0 \\loop\\immediate\\pdfobj stream {\\b\\b}\\advance\\count1 1 \\ifnum\\count1<2000 \\repeat x',
          ),
        { maxFileBytes: 1 * MB },
      );
      assert.equal(result.outcome, 'file_too_large', `${result.outcome} ${result.file} ${result.log.slice(-300)}`);
      assert.equal(result.file, 'main.pdf');
    });

    test('every workspace is deleted afterwards', async () => {
      await Promise.all([runner.close(), cold.close()]);
      // Workspaces live in this process's folder (p<pid>-<start time>) under the root; the
      // last pool to close removes the folder itself (an open pool elsewhere keeps it, empty).
      const folders = (await readdir(workRoot)).filter((name) => name !== 'texmf-var');
      assert.ok(folders.length <= 1 && folders.every((name) => /^p\d+-\d+$/.test(name)), folders.join(', '));
      for (const folder of folders) assert.deepEqual(await readdir(join(workRoot, folder)), []);
    });
  });
});
