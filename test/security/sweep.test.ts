// A service that was killed leaves its job workspaces (customer source) under the shared work
// root; the next start removes them, and only them: a live process's folder (another service,
// a parallel test file) is never touched, nor anything a link points to. A work root another
// user made, or may write to, is refused before anything is put in or read from it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { claimWorkRoot, ownerFolder, startTime, sweepWorkRoot, WorkRootRefused } from '../../src/tex/sandbox/sweep.js';
import { TexRunner } from '../../src/tex/runner.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

describe('sweeping job workspaces left by dead services', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-sweep-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  test("a killed process's folder is removed; a live one's is kept", async () => {
    // A real second process makes its folder and a workspace with a source in it, then waits.
    const script = `import { ownerFolder } from ${JSON.stringify(new URL('../../src/tex/sandbox/sweep.ts', import.meta.url).href)};
import { mkdirSync, writeFileSync } from 'node:fs';
const folder = await ownerFolder(process.argv[1]);
mkdirSync(folder + '/job'); writeFileSync(folder + '/job/main.tex', 'customer source');
console.log(folder); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, root], { stdio: ['ignore', 'pipe', 'inherit'] });
    const folder = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
    assert.ok(existsSync(join(folder, 'job', 'main.tex')));

    const mine = await ownerFolder(root);
    assert.deepEqual(await sweepWorkRoot(root), [], 'nothing is swept while both owners live');
    assert.ok(existsSync(join(folder, 'job', 'main.tex')));

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const name = folder.slice(root.length + 1);
    assert.deepEqual(await sweepWorkRoot(root), [name]);
    assert.equal(existsSync(folder), false, "the dead process's workspaces are gone");
    assert.ok(existsSync(mine), 'our own folder stays');
  });

  test('a reused pid with another start time counts as dead; links and foreign names are left alone', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'quire-sweep-outside-'));
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    // Our own pid, but not our start time: a previous process that had this pid.
    const stale = join(root, `p${process.pid}-1`);
    mkdirSync(join(stale, 'job'), { recursive: true });
    symlinkSync(outside, join(stale, 'job', 'link'));
    // A dead-looking name that is a link: never followed, never removed.
    symlinkSync(outside, join(root, 'p999999999-1'));
    mkdirSync(join(root, 'texmf-var'), { recursive: true });
    assert.notEqual(await startTime(process.pid), '1');
    assert.deepEqual(await sweepWorkRoot(root), [`p${process.pid}-1`]);
    assert.equal(existsSync(stale), false);
    assert.ok(existsSync(join(outside, 'keep.txt')), 'the link target survives');
    assert.ok(readdirSync(root).includes('p999999999-1'));
    assert.ok(existsSync(join(root, 'texmf-var')));
    await rm(outside, { recursive: true, force: true });
  });

  test('the runner sweeps before its first job', async () => {
    const dead = join(root, 'p999999998-5');
    mkdirSync(join(dead, 'job'), { recursive: true });
    writeFileSync(join(dead, 'job', 'main.tex'), 'customer source');
    const runner = new TexRunner({ workRoot: root, isolate: true, root: defaultImageRoot(), warm: false });
    const uid = process.getuid?.() === 0 ? 198800 : undefined;
    const result = await runner.run(
      { source: '\\documentclass{article}\\begin{document}x\\end{document}', compiler: 'pdflatex', timeoutMs: 20_000, maxFileBytes: 1 << 20 },
      uid,
    );
    assert.equal(result.outcome, 'ok');
    assert.equal(existsSync(dead), false);
    await runner.close();
  });

  test('start() is the explicit sweep a server runs before serving, once', async () => {
    const dead = join(root, 'p999999997-5');
    mkdirSync(join(dead, 'job'), { recursive: true });
    const runner = new TexRunner({ workRoot: root, isolate: true, root: defaultImageRoot(), warm: false });
    assert.deepEqual(await runner.start(), ['p999999997-5']);
    assert.equal(existsSync(dead), false);
    assert.equal(runner.start(), runner.start(), 'one sweep per runner');
    await runner.close();
  });

  test('a work root another user owns, or others may write to, is refused; the runner runs no job in it', async () => {
    // The attack: another local user makes the shared work root first (it sits in /tmp) and
    // plants a formats folder in it. The canary: the planted file is still there, untouched.
    const planted = join(root, 'foreign');
    await mkdir(join(planted, 'texlive-2026-x', 'formats-0123456789abcdef'), { recursive: true });
    writeFileSync(join(planted, 'texlive-2026-x', 'formats-0123456789abcdef', 'kpse-hash.so'), 'planted');
    if (process.getuid?.() === 0) {
      await chown(planted, 65534, 65534);
      await assert.rejects(claimWorkRoot(planted), (err: Error) => err instanceof WorkRootRefused && /is owned by uid 65534, not by this service \(uid 0\)/.test(err.message));
      const runner = new TexRunner({ workRoot: planted, isolate: true, root: defaultImageRoot(), warm: false });
      await assert.rejects(runner.start(), WorkRootRefused);
      await runner.close().catch(() => {});
      await chown(planted, 0, 0);
    } else {
      // Not root: no other uid to give a folder to; / is root's.
      await assert.rejects(claimWorkRoot('/'), /is owned by uid 0, not by this service/);
    }
    await chmod(planted, 0o777);
    await assert.rejects(claimWorkRoot(planted), /may be written by any user \(mode 777\)/);
    await chmod(planted, 0o775);
    await assert.rejects(claimWorkRoot(planted), /may be written by its group \(mode 775\)/);
    assert.equal((await stat(planted)).mode & 0o777, 0o775, 'a refused root is left as it was');
    assert.ok(existsSync(join(planted, 'texlive-2026-x', 'formats-0123456789abcdef', 'kpse-hash.so')));
    const link = join(root, 'link-root');
    symlinkSync(planted, link);
    await assert.rejects(claimWorkRoot(link), /is a symbolic link/);
    // Its own root, made or found: 0711.
    const own = join(root, 'own');
    await claimWorkRoot(own);
    assert.equal((await stat(own)).mode & 0o777, 0o711);
    await chmod(own, 0o700);
    await claimWorkRoot(own);
    assert.equal((await stat(own)).mode & 0o777, 0o711);
  });
});
