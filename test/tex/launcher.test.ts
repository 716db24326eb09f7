// The sandbox launcher (tex/sandbox/launcher.ts) with real processes: what a sandbox's driver relies
// on (its stdin and stdout, its stderr when kept, its exit code or signal, a session and process group of its own,
// the unprivileged uid, an empty environment), FIFOs that nothing else can open once the
// child runs, and many launches at once, each with its own pipes.
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { Launcher, LauncherExited, type SandboxProcess } from '../../src/tex/sandbox/launcher.js';

const UID = CONVERTER_UID - 8;

function collect(child: SandboxProcess): Promise<{ out: string; code: number | null; signal: string | null }> {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ out, code, signal })));
}

describe('sandbox launcher', () => {
  const launcher = new Launcher();
  after(() => launcher.close());

  test('stdin reaches the child, its stdout comes back, and its exit code is reported', async () => {
    const child = await launcher.launch('/bin/sh', ['-c', 'read line; echo "got $line"; exit 3']);
    const done = collect(child);
    child.stdin.end('hello\n');
    assert.deepEqual(await done, { out: 'got hello\n', code: 3, signal: null });
  });

  test('the child leads its own session, so killing its process group ends it with SIGKILL', async () => {
    const child = await launcher.launch('/bin/sleep', ['30']);
    const done = collect(child);
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    assert.equal(Number(fields[2]), child.pid, 'process group');
    assert.equal(Number(fields[3]), child.pid, 'session');
    process.kill(-child.pid!, 'SIGKILL');
    assert.deepEqual(await done, { out: '', code: null, signal: 'signal 9' });
  });

  test('a child killed before it opened its pipes still ends with close', async () => {
    // Launched and killed at once, many times: some die before their FIFOs are open, and some
    // exit just before the helper waits for its next request (an exit it once missed: ~1 in 500).
    for (let i = 0; i < 1000; i++) {
      const child = await launcher.launch('/bin/sleep', ['30']);
      const done = collect(child);
      process.kill(-child.pid!, 'SIGKILL');
      assert.equal((await done).signal, 'signal 9');
    }
  });

  test('runs as the given uid, with its groups dropped and an empty environment', async () => {
    const ids = await launcher.launch('/bin/sh', ['-c', 'id -u; id -g; id -G; cat /proc/self/environ | tr "\\0" "\\n" | grep -cv "^PWD=\\|^$" || true'], UID);
    ids.stdin.end();
    assert.deepEqual(await collect(ids), { out: `${UID}\n${UID}\n${UID}\n0\n`, code: 0, signal: null });
  });

  test('the FIFOs are removed once the child has opened them', async () => {
    const child = await launcher.launch('/bin/cat', []);
    const done = collect(child);
    child.stdin.write('x');
    // The child has opened both ends once its first output arrives.
    await new Promise((resolve) => child.stdout.once('data', resolve));
    assert.match(readlinkSync(`/proc/${child.pid}/fd/0`), /quire-launch-.*\.in \(deleted\)$/);
    assert.match(readlinkSync(`/proc/${child.pid}/fd/1`), /quire-launch-.*\.out \(deleted\)$/);
    child.stdin.end();
    assert.equal((await done).code, 0);
  });

  test('forty launches at once each get their own pipes', async () => {
    const children = await Promise.all([...Array(40).keys()].map((i) => launcher.launch('/bin/sh', ['-c', `cat; echo ${i}`])));
    const results = await Promise.all(
      children.map((child, i) => {
        const done = collect(child);
        child.stdin.end(`in${i}:`);
        return done;
      }),
    );
    assert.deepEqual(
      results.map((r) => r.out),
      [...Array(40).keys()].map((i) => `in${i}:${i}\n`),
    );
  });

  test('stderr comes back on a pipe of its own when the launch keeps it, and goes nowhere otherwise', async () => {
    const kept = await launcher.launch('/bin/sh', ['-c', 'echo out; echo err >&2; exit 2'], undefined, true);
    let err = '';
    kept.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    kept.stdin.end();
    // 'close' waits for both pipes: the whole of stderr is here when it comes.
    assert.deepEqual(await collect(kept), { out: 'out\n', code: 2, signal: null });
    assert.equal(err, 'err\n');
    const dropped = await launcher.launch('/bin/sh', ['-c', 'echo out; echo err >&2']);
    assert.equal(dropped.stderr, undefined);
    dropped.stdin.end();
    assert.deepEqual(await collect(dropped), { out: 'out\n', code: 0, signal: null });
  });

  test('a child with a kept stderr killed before it opened its pipes still ends with close', async () => {
    for (let i = 0; i < 300; i++) {
      const child = await launcher.launch('/bin/sleep', ['30'], undefined, true);
      child.stderr!.resume();
      const done = collect(child);
      process.kill(-child.pid!, 'SIGKILL');
      assert.equal((await done).signal, 'signal 9');
    }
  });

  test('without perl a launch is refused with LauncherExited and the launcher says it is unavailable', async () => {
    const missing = new Launcher('/nonexistent/perl');
    await assert.rejects(missing.launch('/bin/true', []), LauncherExited);
    assert.equal(missing.unavailable, true);
  });
});
