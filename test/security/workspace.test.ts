// A job's workspace is hostile: real lualatex documents put links, hard links, directories,
// loops and FIFOs where the service reads main.log and main.pdf. Each attack goes through the
// HTTP compile route, so the wire status and code are asserted, and a canary file outside
// the workspace must never come back in the body, the service's log or any stored file.
// The attacks run with LUA_INIT turned off (hardenLua: false), so the host-side reads are
// tested on their own; sandbox.test.ts checks that the production lualatex cannot make links.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync, chownSync, renameSync, symlinkSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import { LocalTexPool } from '../../src/queue/local-pool.js';
import { slotUid } from '../../src/tex/sandbox/uids.js';
import { TexRunner } from '../../src/tex/runner.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { afterRun, assertNoLeak, capturedLog, luaDocument, makeCanary, type Canary } from './attack.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const MB = 1024 * 1024;

describe('hostile workspace outputs (host-side reads on their own)', () => {
  let t: TestApp;
  let account: TestAccount;
  let canary: Canary;
  let workRoot: string;
  const logged = capturedLog();

  before(async () => {
    canary = makeCanary();
    workRoot = await mkdtemp(join(tmpdir(), 'quire-sec-jobs-'));
    const shared = join(tmpdir(), 'quire-jobs');
    const runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), hardenLua: false, luaCache: () => prepareLuaCache(shared, defaultImageRoot()) });
    t = await testApp({ log: logged.log, overrides: { texQueue: new LocalTexPool(runner, 1, 8) } });
    account = await createAccount(t.services, 'business');
  });
  after(async () => {
    await t.close();
    await rm(workRoot, { recursive: true, force: true });
    rmSync(canary.path, { force: true });
  });

  async function compile(latex: string, compiler = 'lualatex') {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, compiler }, headers: account.headers });
    assertNoLeak(canary, { body: res.body, lines: logged.lines, dataDir: t.services.dataDir });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }

  async function refused(lua: string, problem: RegExp) {
    const { status, body } = await compile(luaDocument(afterRun(lua)));
    assert.equal(status, 422, JSON.stringify(body).slice(0, 500));
    assert.equal(body.error, 'compilation_failed');
    assert.match(String(body.message), /^The job's output was refused: /);
    assert.match(String(body.message), problem);
    return body;
  }

  /** The workspace of the running job that has written `ready`. */
  function readyWorkspace(): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        for (const folder of readdirSync(workRoot).filter((name) => name.startsWith('p'))) {
          for (const job of readdirSync(join(workRoot, folder))) {
            if (existsSync(join(workRoot, folder, job, 'ready'))) {
              clearInterval(poll);
              resolve(join(workRoot, folder, job));
              return;
            }
          }
        }
        if (Date.now() - started > 20_000) {
          clearInterval(poll);
          reject(new Error('the job never got ready'));
        }
      }, 20);
    });
  }

  /**
   * TeX Live 2026's LuaTeX makes no symbolic links (lfs.link(…, true) is "operation not
   * permitted"), so the test plays the job's part for those: once TeX has finished the PDF and
   * the log, the document waits; `act` changes the workspace as a hostile job would; then the
   * document ends and the service reads what is there.
   */
  async function afterRunDoes(act: (workspace: string) => void) {
    const wait = `local f = io.open("ready", "w") f:write("1") f:close()
local t = os.clock() while not lfs.attributes("go") and os.clock() - t < 15 do end`;
    const pending = compile(luaDocument(afterRun(wait)));
    const workspace = await readyWorkspace();
    act(workspace);
    const uid = process.getuid?.() === 0 ? slotUid(0) : process.getuid!();
    writeFileSync(join(workspace, 'go'), '1');
    chownSync(join(workspace, 'go'), uid, uid);
    return pending;
  }

  async function refusedAfter(act: (workspace: string) => void, problem: RegExp) {
    const { status, body } = await afterRunDoes(act);
    assert.equal(status, 422, JSON.stringify(body).slice(0, 500));
    assert.equal(body.error, 'compilation_failed');
    assert.match(String(body.message), /^The job's output was refused: /);
    assert.match(String(body.message), problem);
  }

  const replaceWithLink = (name: string, target: string) => (workspace: string) => {
    rmSync(join(workspace, name), { force: true });
    symlinkSync(target, join(workspace, name));
  };

  test('a symlink main.log -> canary is refused', async () => {
    await refusedAfter(replaceWithLink('main.log', canary.path), /main\.log is a symbolic link/);
  });

  test('a symlink main.pdf -> canary is refused', async () => {
    await refusedAfter(replaceWithLink('main.pdf', canary.path), /main\.pdf is a symbolic link/);
  });

  test('a link renamed over main.log after the run is refused', async () => {
    await refusedAfter((workspace) => {
      symlinkSync(canary.path, join(workspace, 'swap.tmp'));
      renameSync(join(workspace, 'swap.tmp'), join(workspace, 'main.log'));
    }, /main\.log is a symbolic link/);
  });

  test('a hard link in place of main.log is refused; one to the canary cannot be made', async () => {
    await refused(`os.remove("main.log") assert(lfs.link("main.tex", "main.log"))`, /main\.log is a hard link/);
    // The canary is on another mount (and invisible) inside the sandbox: the link fails.
    const { status, body } = await compile(
      luaDocument(afterRun(`os.remove("main.pdf") local ok, err = lfs.link(${JSON.stringify(canary.path)}, "main.pdf") texio.write_nl("HARDLINK:" .. tostring(ok) .. tostring(err))`)),
    );
    assert.equal(status, 422);
    assert.equal(body.error, 'compilation_failed');
  });

  test('/dev/zero in place of main.log is refused without reading it; RSS stays flat', async () => {
    const rss = process.memoryUsage().rss;
    await refusedAfter(replaceWithLink('main.log', '/dev/zero'), /main\.log is a symbolic link/);
    assert.ok(process.memoryUsage().rss - rss < 100 * MB, `RSS grew by ${Math.round((process.memoryUsage().rss - rss) / MB)} MB`);
  });

  test('a symlink loop in place of main.pdf is refused', async () => {
    await refusedAfter((workspace) => {
      symlinkSync('loop.b', join(workspace, 'loop.a'));
      symlinkSync('loop.a', join(workspace, 'loop.b'));
      replaceWithLink('main.pdf', 'loop.a')(workspace);
    }, /main\.pdf is a symbolic link/);
    await refusedAfter(replaceWithLink('main.log', 'main.log'), /main\.log is a symbolic link/);
  });

  test('a directory in place of main.pdf is refused', async () => {
    await refused(`os.remove("main.pdf") assert(lfs.mkdir("main.pdf"))`, /main\.pdf is a directory, not a regular file/);
  });

  test('a removed transcript is refused, not a server error', async () => {
    await refused(`os.remove("main.log")`, /main\.log is missing/);
  });

  test('a link where the rerun logic reads (.aux, .fls) is refused', async () => {
    await refusedAfter(replaceWithLink('main.aux', canary.path), /main\.aux is a symbolic link/);
    await refusedAfter(replaceWithLink('main.fls', '/dev/zero'), /main\.fls is a symbolic link/);
  });

  test('a FIFO put in place of main.log during the run is refused without blocking; RSS stays flat', async () => {
    // Lua cannot make a FIFO, so the test plays the job's part: the document waits for it,
    // the FIFO (owned by the job's uid) replaces main.log, then the document ends.
    const rss = process.memoryUsage().rss;
    const lua = `local f = io.open("ready", "w") f:write("1") f:close()
local t = os.clock() while not lfs.attributes("go") and os.clock() - t < 15 do end`;
    const pending = compile(luaDocument(lua));
    const workspace = await readyWorkspace();
    const fifo = join(workspace, 'fifo.tmp');
    execFileSync('mkfifo', [fifo]);
    const uid = process.getuid?.() === 0 ? slotUid(0) : process.getuid!();
    chownSync(fifo, uid, uid);
    renameSync(fifo, join(workspace, 'main.log'));
    writeFileSync(join(workspace, 'go'), '1');
    chownSync(join(workspace, 'go'), uid, uid);
    const { status, body } = await pending;
    assert.equal(status, 422);
    assert.equal(body.error, 'compilation_failed');
    assert.match(String(body.message), /main\.log is a named pipe \(FIFO\), not a regular file/);
    assert.ok(process.memoryUsage().rss - rss < 100 * MB);
  });

  test('cleanup does not follow a link out of the workspace', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'quire-sec-outside-'));
    writeFileSync(join(outside, 'keep.txt'), canary.secret);
    const { status } = await afterRunDoes((workspace) => symlinkSync(outside, join(workspace, 'escape')));
    assert.equal(status, 200);
    await t.services.texQueue.close();
    assert.ok(existsSync(join(outside, 'keep.txt')), 'the linked directory survives the cleanup');
    await rm(outside, { recursive: true, force: true });
    // Every workspace of this process is gone.
    for (const folder of readdirSync(workRoot).filter((name) => name.startsWith('p'))) {
      assert.deepEqual(readdirSync(join(workRoot, folder)), []);
    }
  });
});

describe('Workspace reader on real file system objects', () => {
  // Objects a TeX job cannot make itself (a device node) are made here, as root would.
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-sec-ws-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a device node, a FIFO, a foreign owner, a nested link and an oversized file are refused or capped', async () => {
    const { Workspace, WorkspaceViolation } = await import('../../src/tex/sandbox/workspace.js');
    const uid = process.getuid!();
    const ws = new Workspace(dir, uid);
    const violation = (pattern: RegExp) => (err: unknown) => {
      assert.ok(err instanceof WorkspaceViolation);
      assert.match(err.message, pattern);
      return true;
    };
    if (uid === 0) {
      execFileSync('mknod', [join(dir, 'zero'), 'c', '1', '5']);
      await assert.rejects(ws.read('zero', MB), violation(/zero is a device/));
      writeFileSync(join(dir, 'foreign'), 'x');
      chownSync(join(dir, 'foreign'), 4242, 4242);
      await assert.rejects(ws.read('foreign', MB), violation(/owned by another user \(uid 4242\)/));
    }
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    await assert.rejects(ws.read('pipe', MB), violation(/pipe is a named pipe/));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'ok.aux'), 'fine');
    assert.equal(String(await ws.read('sub/ok.aux', MB)), 'fine');
    symlinkSync('/etc', join(dir, 'etc'));
    await assert.rejects(ws.read('etc/hostname', MB), violation(/passes through/));
    await assert.rejects(ws.read('../escape', MB), violation(/not a path inside the workspace/));
    writeFileSync(join(dir, 'big.pdf'), Buffer.alloc(2 * MB));
    assert.equal(await ws.read('big.pdf', MB), 'over');
    // A huge log keeps its head and tail with a marker, and only those are read.
    writeFileSync(join(dir, 'huge.log'), Buffer.concat([Buffer.from('HEAD'), Buffer.alloc(8 * MB, 'x'), Buffer.from('TAIL')]));
    const log = (await ws.readLog('huge.log'))!;
    assert.ok(log.startsWith('HEAD') && log.endsWith('TAIL'));
    assert.match(log, /\[log truncated: \d+ bytes left out\]/);
    assert.ok(log.length < 4 * MB);
    // The walk lists regular files only and never enters the linked /etc.
    const { files } = await ws.files();
    assert.deepEqual(files.map((f) => f.name).sort(), ['big.pdf', ...(uid === 0 ? ['foreign'] : []), 'huge.log', 'sub/ok.aux']);
  });
});
