// Inflated formats (formats.ts): prepared once per TeX Live, and a job that loads them gives
// the same pages (for pdfTeX and LuaTeX the same bytes but for dates and ID) as one that loads TeX Live's own.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { stable } from './support.js';
import { SANDBOX_FORMATS } from '../../src/tex/sandbox/sandbox.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { prepareFormats, type Formats } from '../../src/tex/caches/formats.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import type { TexJob } from '../../src/tex/job.js';
import { TexRunner } from '../../src/tex/runner.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { startTime } from '../../src/tex/sandbox/sweep.js';

const UID = process.getuid?.() === 0 ? CONVERTER_UID - 3 : undefined;
const MB = 1024 * 1024;

/** Every page rendered (grey, 50 dpi): xdvipdfmx names its font subsets anew on every run. */
function pages(pdf: Buffer | undefined): Buffer {
  assert.ok(pdf, 'a PDF');
  return execFileSync('pdftoppm', ['-r', '50', '-gray', '-'], { input: pdf, maxBuffer: 64 * MB });
}

/**
 * Waits until a sandboxed engine whose format folder is `dir` has read the whole of `name`
 * (its read bytes reach the file's size): a warm engine then waits with the format in memory.
 */
async function formatLoaded(dir: string, name: string): Promise<void> {
  const [folder, size] = [(await stat(dir)).ino, (await stat(join(dir, name))).size];
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if ((await stat(`/proc/${pid}/root${SANDBOX_FORMATS}`)).ino !== folder) continue;
        const read = Number(/^rchar: (\d+)$/m.exec(await readFile(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
        if ((await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes('-fmt=') && read >= size) return;
      } catch {
        // A process that ended meanwhile, or another's.
      }
    }
  }
  throw new Error(`no engine loaded ${name} within a minute`);
}

const doc = (body: string) =>
  `\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n\\section{Intro}\n${body}\n\\[ e^{i\\pi} + 1 = 0 \\]\n\\end{document}\n`;

describe('inflated formats', () => {
  let root: string;
  let formats: Formats;
  let inflated: TexRunner;
  let stock: TexRunner;
  const job = (compiler: TexJob['compiler'], source: string): TexJob => ({ source, compiler, timeoutMs: 60_000, maxFileBytes: 8 * MB });

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-formats-'));
    // Job uids traverse it to their workspaces and to the formats, as they do the real work root.
    await chmod(root, 0o711);
    formats = await prepareFormats(root, defaultImageRoot());
    const luaCache = () => prepareLuaCache(join(tmpdir(), 'quire-jobs'), defaultImageRoot());
    inflated = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), luaCache, formats: async () => formats });
    stock = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), luaCache });
  });

  after(async () => {
    await Promise.all([inflated.close(), stock.close()]);
    await rm(root, { recursive: true, force: true });
  });

  test('each engine format is the installed one, inflated, in a folder named after the installation', async () => {
    assert.deepEqual([...formats.compilers].sort(), ['lualatex', 'pdflatex', 'xelatex']);
    assert.match(formats.dir, /\/formats-[0-9a-f]{16}$/);
    const installed = (await readFile(join(formats.dir, '.ready'), 'utf8')).trim().split('\n');
    for (const line of installed) {
      const [compiler, path] = line.split(' ') as [string, string];
      const inflatedBytes = await readFile(join(formats.dir, `${compiler}.fmt`));
      assert.ok(inflatedBytes.equals(gunzipSync(await readFile(path))), `${compiler}.fmt is ${path} inflated`);
    }
    assert.equal(((await stat(formats.dir)).mode & 0o777).toString(8), '755');
    // Prepared once: a second call reuses the folder, and leaves no build folder behind.
    assert.deepEqual(await prepareFormats(root, defaultImageRoot()), formats);
    assert.deepEqual((await readdir(root)).filter((n) => n.startsWith('formats-')), [formats.dir.slice(root.length + 1)]);
  });

  test('an older installation’s folder is removed when the formats are prepared', async () => {
    const stale = join(root, 'formats-0123456789abcdef');
    await mkdir(stale);
    // The current folder gone too: the next call builds it, and then sweeps the stale one.
    await rm(formats.dir, { recursive: true, force: true });
    formats = await prepareFormats(root, defaultImageRoot());
    assert.equal(existsSync(stale), false);
    assert.equal(existsSync(join(formats.dir, '.ready')), true);
  });

  test('another build\'s folder stays while a live process uses it, and goes once none does', async () => {
    // Another build of the service (another checkout, a rolling upgrade: with the library or
    // without) names its folder otherwise; its process marked the folder as used when it prepared it.
    const other = join(root, 'formats-fedcba9876543210');
    await mkdir(other);
    await writeFile(join(other, '.ready'), '');
    const user = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(user, 'spawn');
    const mark = join(root, '.formats-in-use', `formats-fedcba9876543210.p${user.pid}-${await startTime(user.pid!)}`);
    await writeFile(mark, '');
    // A mark of a process that has ended (a pid with another start time) counts for nothing.
    const ended = join(root, '.formats-in-use', `formats-0123456789abcdef.p${user.pid}-1`);
    await writeFile(ended, '');
    await mkdir(join(root, 'formats-0123456789abcdef'));
    // Other folders are swept when this one is built: it is removed first.
    await rm(formats.dir, { recursive: true, force: true });
    assert.deepEqual(await prepareFormats(root, defaultImageRoot()), formats);
    assert.equal(existsSync(join(other, '.ready')), true, 'used by a live process: kept');
    assert.equal(existsSync(join(root, 'formats-0123456789abcdef')), false, 'used by none: removed');
    assert.equal(existsSync(ended), false, 'the ended process\'s mark is removed');
    // This process marked its own folder too.
    assert.equal(existsSync(join(root, '.formats-in-use', `${formats.dir.slice(root.length + 1)}.p${process.pid}-${await startTime(process.pid)}`)), true);
    user.kill('SIGKILL');
    await once(user, 'close');
    await rm(formats.dir, { recursive: true, force: true });
    assert.deepEqual(await prepareFormats(root, defaultImageRoot()), formats);
    assert.equal(existsSync(other), false, 'its process ended: removed');
    assert.equal(existsSync(mark), false);
    assert.deepEqual((await readdir(root)).filter((n) => n.includes('formats')).sort(), ['.formats-in-use', formats.dir.slice(root.length + 1)]);
  });

  test('a root it makes itself stays traversable for the job uids', async () => {
    const fresh = join(root, 'fresh', 'texlive');
    const made = await prepareFormats(fresh, defaultImageRoot());
    assert.equal((await stat(fresh)).mode & 0o777, 0o755);
    assert.equal((await stat(made.dir)).mode & 0o777, 0o755);
    assert.equal((await stat(join(fresh, '.formats-in-use'))).mode & 0o777, 0o700);
    await rm(join(root, 'fresh'), { recursive: true, force: true });
  });

  test('the engine loads the prepared format: a broken one there stops the job before TeX starts', async () => {
    const broken = join(root, 'broken');
    await mkdir(broken, { mode: 0o755 });
    await writeFile(join(broken, 'pdflatex.fmt'), 'not a format', { mode: 0o644 });
    const runner = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), formats: async () => ({ dir: broken, compilers: new Set(['pdflatex']), kpseHash: false }) });
    try {
      await assert.rejects(runner.run(job('pdflatex', doc('x')), UID), /TeX did not start: [^]*Fatal format file error/);
    } finally {
      await runner.close();
    }
  });

  test('a format gone under the second pass is the service\'s fault: the first pass\'s transcript is not judged as the document\'s failure', async () => {
    const gone = join(root, 'gone');
    await mkdir(gone, { mode: 0o755 });
    await copyFile(join(formats.dir, 'pdflatex.fmt'), join(gone, 'pdflatex.fmt'));
    await chmod(join(gone, 'pdflatex.fmt'), 0o644);
    const runner = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), formats: async () => ({ dir: gone, compilers: new Set(['pdflatex']), kpseHash: false }) });
    try {
      // The first job leaves the uid a warm pdflatex, which loads the format ahead of the next job.
      assert.equal((await runner.run(job('pdflatex', doc('x')), UID)).outcome, 'ok');
      await formatLoaded(gone, 'pdflatex.fmt');
      await rm(join(gone, 'pdflatex.fmt'));
      // Pass 1 runs on the loaded engine and writes its transcript; pass 2 (a \ref to resolve) cannot load the format.
      await assert.rejects(runner.run(job('pdflatex', doc('See \\ref{a}.\\label{a}')), UID), /TeX did not start \(pass 2\)[^]*can't find the format file/);
    } finally {
      await runner.close();
    }
  });

  for (const compiler of ['pdflatex', 'xelatex', 'lualatex'] as const) {
    test(`${compiler}: the inflated format gives the same PDF as TeX Live's own, and the same error line`, async () => {
      const source = doc('Same bytes from either format. \\ref{none}');
      const [a, b] = [await inflated.run(job(compiler, source), UID), await stock.run(job(compiler, source), UID)];
      assert.equal(a.outcome, 'ok');
      assert.equal(b.outcome, 'ok');
      assert.ok(pages(a.pdf).equals(pages(b.pdf)), 'the same pages');
      // pdfTeX and LuaTeX write the same bytes but for dates and ID; xdvipdfmx does not, even run twice.
      if (compiler !== 'xelatex') assert.equal(stable(a.pdf), stable(b.pdf));

      const broken = doc('Line five breaks: \\nosuchmacro');
      const [c, d] = [await inflated.run(job(compiler, broken), UID), await stock.run(job(compiler, broken), UID)];
      assert.equal(c.outcome, 'failed');
      assert.equal(d.outcome, 'failed');
      assert.match(c.log, /\.\/main\.tex:5: Undefined control sequence/);
      assert.match(d.log, /\.\/main\.tex:5: Undefined control sequence/);
    });
  }
});
