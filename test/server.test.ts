// The server process as an operator runs it: it starts, serves, stops cleanly on SIGTERM
// (leaving no job folder behind), leaves nothing of a kill -9 behind once restarted, and
// refuses to start when the TeX sandbox cannot run unless told to run without it, or when its
// work root is not its own.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from './browser.js';

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

function start(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** `tries` × 100 ms: a first start in a fresh TMPDIR prepares its formats before it serves. */
async function healthy(port: number, run: Run, tries = 200): Promise<Response> {
  for (let i = 0; i < tries; i++) {
    try {
      return await fetch(`http://127.0.0.1:${port}/health`);
    } catch {
      if (run.child.exitCode !== null) throw new Error(`server exited early:\n${run.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server did not answer:\n${run.output()}`);
}

// A server that fails to stop must fail the test, not hang the suite.
const LIMIT = { timeout: 60_000 };

describe('the server process', () => {
  let dir: string;
  let fakeBin: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-server-'));
    // The probe runs as an unprivileged job uid when we are root: it must be able to see the fake.
    await chmod(dir, 0o755);
    fakeBin = join(dir, 'bin');
    await mkdir(fakeBin);
    // A bubblewrap that cannot create namespaces, as on a locked-down host.
    await writeFile(join(fakeBin, 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    await chmod(join(fakeBin, 'bwrap'), 0o755);
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test('serves, then on SIGTERM finishes and exits 0', LIMIT, async () => {
    const port = await freePort();
    const run = start({ PORT: String(port), HOST: '127.0.0.1', QUIRE_DATA_DIR: join(dir, 'a') });
    const res = await healthy(port, run);
    assert.equal(res.status, 200);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /shutting down/);
    assert.match(run.output(), /"msg":"stopped"/);
  });

  test('on SIGTERM after a compile it removes its own job folder and exits 0', LIMIT, async () => {
    // Its own TMPDIR, so that the work root holds only this server's folder.
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    await chmod(tmp, 0o755);
    const port = await freePort();
    const run = start({ PORT: String(port), HOST: '127.0.0.1', QUIRE_DATA_DIR: join(dir, 'e'), TMPDIR: tmp });
    assert.equal((await healthy(port, run)).status, 200);
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/compile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latex: '\\documentclass{article}\\begin{document}Stop cleanly.\\end{document}' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match((await res.json()).pdf_url, /^http/);
    const root = join(tmp, 'quire-jobs');
    const own = (await readdir(root)).filter((name) => name.startsWith(`p${run.child.pid}-`));
    assert.equal(own.length, 1, 'the server made its folder');
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.output());
    assert.deepEqual(
      (await readdir(root)).filter((name) => /^p\d+-\d+$/.test(name)),
      [],
      'no job folder is left',
    );
  });

  test('refuses to start when the sandbox cannot run', LIMIT, async () => {
    const run = start({ PORT: String(await freePort()), QUIRE_DATA_DIR: join(dir, 'b'), PATH: `${fakeBin}:${process.env.PATH}` });
    assert.notEqual(await run.exited, 0);
    assert.match(run.output(), /sandbox \(bubblewrap\) cannot run/);
    assert.match(run.output(), /QUIRE_SANDBOX=off/);
  });

  test('with QUIRE_SANDBOX=off it starts and warns loudly', LIMIT, async () => {
    const port = await freePort();
    const run = start({
      PORT: String(port),
      HOST: '127.0.0.1',
      QUIRE_DATA_DIR: join(dir, 'c'),
      QUIRE_SANDBOX: 'off',
      PATH: `${fakeBin}:${process.env.PATH}`,
    });
    const res = await healthy(port, run);
    assert.equal((await res.json()).sandbox, false);
    assert.match(run.output(), /WARNING: QUIRE_SANDBOX=off/);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });

  test('a bad setting stops it with a message naming the variable', LIMIT, async () => {
    const run = start({ PORT: 'eighty', QUIRE_DATA_DIR: join(dir, 'd') });
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /configuration error: PORT must be a whole number/);
  });

  test('after a kill -9 mid-compile and a restart, nothing of the killed process is left in its TMPDIR', { timeout: 240_000 }, async () => {
    const tmp = join(dir, 'tmp-kill');
    await mkdir(tmp);
    await chmod(tmp, 0o755);
    const env = { HOST: '127.0.0.1', QUIRE_DATA_DIR: join(dir, 'k'), TMPDIR: tmp };
    const port = await freePort();
    const first = start({ ...env, PORT: String(port) });
    assert.equal((await healthy(port, first, 1200)).status, 200);
    // Loops until the plan's timeout: the server is killed long before.
    const loop = '\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n';
    const looping = fetch(`http://127.0.0.1:${port}/api/v1/compile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latex: loop }) }).catch((err: Error) => err);
    // The canary: the job's source, in its workspace, while the compile runs.
    const jobs = join(tmp, 'quire-jobs');
    const own = async () => (await readdir(jobs).catch(() => [])).filter((name) => name.startsWith(`p${first.child.pid}-`));
    let workspace = '';
    for (let i = 0; i < 300 && !workspace; i++) {
      for (const folder of await own()) {
        for (const job of await readdir(join(jobs, folder)).catch(() => [])) {
          if (existsSync(join(jobs, folder, job, 'main.tex'))) workspace = join(jobs, folder, job);
        }
      }
      if (!workspace) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(workspace, `the compile's workspace appeared:\n${first.output()}`);
    const during = await readdir(tmp);
    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok((await looping) instanceof Error, 'the killed server never answered');
    assert.ok(existsSync(workspace), 'the kill left the workspace behind');

    // The restarted server sweeps before it serves.
    const secondPort = await freePort();
    const second = start({ ...env, PORT: String(secondPort) });
    assert.equal((await healthy(secondPort, second, 1200)).status, 200);
    assert.equal(existsSync(workspace), false, 'the killed server\'s workspace is gone');
    assert.deepEqual(await own(), [], 'its folder under the work root is gone');
    // Whatever else the killed process had in TMPDIR (its launcher's folder, a helper's scratch) is gone too.
    const left = (await readdir(tmp)).filter((name) => during.includes(name) && name.startsWith('quire-') && name !== 'quire-jobs');
    assert.deepEqual(left, [], `left in TMPDIR: ${left.join(', ')}`);
    assert.match(second.output(), /removed job workspaces left by a stopped process/);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.output());
  });

  test('refuses to start when its work root may be written by others', LIMIT, async () => {
    const tmp = join(dir, 'tmp-open');
    await mkdir(join(tmp, 'quire-jobs'), { recursive: true });
    await chmod(tmp, 0o755);
    await chmod(join(tmp, 'quire-jobs'), 0o777);
    const run = start({ PORT: String(await freePort()), HOST: '127.0.0.1', QUIRE_DATA_DIR: join(dir, 'o'), TMPDIR: tmp });
    assert.equal(await run.exited, 1);
    assert.match(run.output(), /the work root .*quire-jobs may be written by any user \(mode 777\); another user could plant files there/);
  });
});
