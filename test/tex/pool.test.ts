// The warm sandbox per slot (pool.ts) with real sandboxes: a released uid gets its next
// sandbox at once, with its last job's engine waiting in it; a stopped job's sandbox is gone,
// every process of it, when release resolves; closing ends the spares; commands carry the
// job limits, the lualatex cache copy and the inflated formats as the sandbox sees them.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { leftovers } from './support.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { MEMORY_BYTES, PROCESSES } from '../../src/tex/job.js';
import { SandboxPool, type PoolOptions } from '../../src/tex/sandbox/pool.js';
import { SANDBOX_FORMATS, SANDBOX_LUA_CACHE } from '../../src/tex/sandbox/sandbox.js';
import { sandboxUid } from '../../src/tex/sandbox/uids.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = sandboxUid(CONVERTER_UID - 4);

/** The workspaces under `root` (one folder per process, one workspace per sandbox); each test closes its pool. */
async function workspaces(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const folder of await readdir(root)) found.push(...(await readdir(join(root, folder))));
  return found;
}

describe('sandbox pool', () => {
  let root: string;
  const pools: SandboxPool[] = [];
  const pool = (options: Partial<PoolOptions> = {}) => {
    const made = new SandboxPool({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), ...options });
    pools.push(made);
    return made;
  };

  // Sandboxes do not keep the process alive (a warm one waits for work): this does, while a test awaits one.
  let alive: NodeJS.Timeout;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-pool-'));
    // Job uids must reach their workspaces, the lua cache and the formats below it.
    await chmod(root, 0o711);
    alive = setInterval(() => {}, 1000);
  });
  after(async () => {
    clearInterval(alive);
    await Promise.all(pools.map((p) => p.close()));
    await rm(root, { recursive: true, force: true });
  });

  test('start prepares the work root once: traversable, not listable, for the job uids', async () => {
    const p = pool();
    assert.equal(p.start(), p.start());
    // What a start sweeps: only dead processes' launcher folders (a run killed earlier on this machine), nothing else.
    assert.deepEqual((await p.start()).filter((name) => !name.startsWith('quire-launch-p')), []);
    assert.equal((await stat(join(root, 'jobs'))).mode & 0o777, 0o711);
    await p.close();
  });

  test('a released uid gets a warm sandbox with its last engine waiting; the old workspace is gone', async () => {
    const p = pool();
    const first = await p.take(UID, 'xelatex');
    assert.equal(first.engine, undefined, 'nothing ran on this uid before: a new sandbox');
    assert.equal((await first.run(['true'])).code, 0);
    await p.release(first, UID, false);
    const second = await p.take(UID, 'pdflatex');
    assert.notEqual(second.dir, first.dir);
    assert.equal(second.engine, 'xelatex');
    assert.ok(!existsSync(first.dir));
    await p.release(second, UID, false);
    const third = await p.take(UID, 'pdflatex');
    assert.equal(third.engine, 'pdflatex');
    await p.release(third, UID, false);
    await p.close();
  });

  test('without warm engines the spare sandbox waits empty; without warm sandboxes there is none', async () => {
    const engineless = pool({ warmEngines: false });
    await engineless.release(await engineless.take(UID, 'pdflatex'), UID, false);
    const spare = await engineless.take(UID, 'pdflatex');
    assert.ok(spare.alive);
    assert.equal(spare.engine, undefined);
    await engineless.release(spare, UID, false);
    await engineless.close();

    const cold = pool({ warm: false });
    const session = await cold.take(UID, 'pdflatex');
    await cold.release(session, UID, false);
    await cold.close();
    assert.deepEqual(await workspaces(join(root, 'jobs')), [], 'no spare was started');
  });

  test('a stopped job: when release resolves, its workspace and every process of it are gone', async () => {
    const p = pool({ warm: false });
    const session = await p.take(UID, 'pdflatex');
    const running = session.run(['sh', '-c', 'sleep 30 & sleep 30 & wait']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    session.kill();
    await assert.rejects(running, /sandbox exited/);
    await p.release(session, UID, true);
    assert.ok(!existsSync(session.dir));
    assert.equal(leftovers(UID), '');
    await p.close();
  });

  test('close ends the spare sandboxes and starts no more', async () => {
    const p = pool();
    const session = await p.take(UID, 'pdflatex');
    await p.release(session, UID, false);
    await p.close();
    assert.deepEqual(await workspaces(join(root, 'jobs')), []);
    assert.equal(leftovers(UID), '');
    // A job that still ends after close: its sandbox goes, none follows it.
    const late = await p.take(UID, 'pdflatex');
    await p.release(late, UID, false);
    await p.close();
    assert.deepEqual(await workspaces(join(root, 'jobs')), []);
  });

  test('formats whose folder has gone (another build removed it) are prepared again before a sandbox mounts them', async () => {
    const dir = join(root, 'gone-formats');
    let prepared = 0;
    const formats = async () => {
      prepared++;
      await mkdir(dir, { recursive: true, mode: 0o755 });
      return { dir, compilers: new Set(['pdflatex'] as const), kpseHash: false };
    };
    const p = pool({ warm: false, formats });
    const first = await p.take(UID, 'pdflatex');
    assert.equal(first.formats, dir);
    await p.release(first, UID, false);
    await rm(dir, { recursive: true });
    // Without a new folder the sandbox would not start: "bwrap: Can't find source path …".
    const session = await p.take(UID, 'pdflatex');
    assert.equal(prepared, 2);
    assert.deepEqual(await session.run(['sh', '-c', `test -d ${SANDBOX_FORMATS} && echo mounted`]), { code: 0, output: 'mounted\n' });
    await p.release(session, UID, false);
    await p.close();
  });

  test('commands: the job limits, the lualatex cache copied first, the inflated format as mounted', async () => {
    const formats = join(root, 'formats');
    const luaCache = join(root, 'texmf-var');
    await Promise.all([mkdir(formats), mkdir(luaCache)]);
    const p = pool({ warm: false, luaCache: async () => luaCache, formats: async () => ({ dir: formats, compilers: new Set(['pdflatex'] as const), kpseHash: false }) });
    const session = await p.take(UID, 'lualatex');
    const limits = { cpuSeconds: 3, fileBytes: 100, memoryBytes: 200, processes: 4 };
    assert.deepEqual(p.command(session, ['pdflatex', 'main.tex'], limits), [
      'prlimit', '--cpu=3', '--fsize=100', '--as=200', '--nproc=4', '--core=0', '--', 'pdflatex', 'main.tex',
    ]);
    // A warm engine: memory and processes capped now, CPU time and file size by the job's first pass.
    assert.deepEqual(p.command(session, ['pdflatex']), ['prlimit', `--as=${MEMORY_BYTES}`, `--nproc=${PROCESSES}`, '--core=0', '--', 'pdflatex']);
    const lua = p.command(session, ['lualatex', 'main.tex'], limits);
    assert.deepEqual(lua.slice(3, 5), [SANDBOX_LUA_CACHE, '/tmp/texmf-var']);
    assert.deepEqual(lua.slice(5), ['prlimit', '--cpu=3', '--fsize=100', '--as=200', '--nproc=4', '--core=0', '--', 'lualatex', 'main.tex']);
    assert.deepEqual(p.fmt(session, 'pdflatex'), [`-fmt=${SANDBOX_FORMATS}/pdflatex`, '-progname=pdflatex']);
    assert.deepEqual(p.fmt(session, 'xelatex'), [], 'no inflated xelatex format');
    // Both are mounted where the commands name them.
    const seen = await session.run(['sh', '-c', `test -d ${SANDBOX_LUA_CACHE} && test -d ${SANDBOX_FORMATS} && echo mounted`]);
    assert.equal(seen.output, 'mounted\n');
    await p.release(session, UID, false);
    await p.close();
  });

  test('an image whose luaotfload reads by absolute path: lualatex alone reads under openin_any=r', async () => {
    const p = pool({ warm: false, luaReadsByPath: true });
    const session = await p.take(UID, 'lualatex');
    const limits = { cpuSeconds: 3, fileBytes: 100, memoryBytes: 200, processes: 4 };
    assert.deepEqual(p.command(session, ['lualatex', 'main.tex'], limits).slice(-5), ['--', 'env', 'openin_any=r', 'lualatex', 'main.tex']);
    assert.deepEqual(p.command(session, ['lualatex']).slice(-3), ['env', 'openin_any=r', 'lualatex'], 'the warm engine too');
    assert.deepEqual(p.command(session, ['pdflatex', 'main.tex'], limits).slice(-3), ['--', 'pdflatex', 'main.tex']);
    // The sandbox's own setting stays paranoid for everything else.
    assert.equal((await session.run(['sh', '-c', 'echo $openin_any'])).output, 'p\n');
    await p.release(session, UID, false);
    await p.close();
  });
});
