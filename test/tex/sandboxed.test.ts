// runSandboxed (sandboxed.ts) with real processes in the real sandbox: stdin reaches the
// command and stdout comes back, the command runs as the spec's uid with nothing of the host
// visible and under its prlimit caps, a timeout and output past the cap kill everything it
// started, and a command that cannot start rejects.
import assert from 'node:assert/strict';
import { chown, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { settledLeftovers } from './support.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import type { SandboxSpec } from '../../src/tex/sandbox/sandbox.js';
import { runSandboxed } from '../../src/tex/sandbox/sandboxed.js';
import { sandboxUid } from '../../src/tex/sandbox/uids.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = sandboxUid(CONVERTER_UID - 5);
const MB = 1024 * 1024;
const LIMITS = { cpuSeconds: 10, fileBytes: MB, memoryBytes: 1024 * MB, processes: 16 };

describe('runSandboxed', () => {
  let workspace: string;
  let spec: SandboxSpec;

  before(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'quire-sandboxed-'));
    if (UID !== undefined) await chown(workspace, UID, UID);
    spec = { workspace, env: {}, isolate: true, root: defaultImageRoot(), limits: LIMITS, uid: UID };
  });
  after(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  test('the uid: the one given when the service is root, none otherwise', () => {
    assert.equal(sandboxUid(1234), process.getuid?.() === 0 ? 1234 : undefined);
  });

  test('stdin reaches the command, stdout and stderr come back with the exit code', async () => {
    const result = await runSandboxed(spec, ['sh', '-c', 'cat; echo complaint >&2; exit 7'], { stdin: 'from stdin', timeoutMs: 10_000, maxOutput: MB });
    assert.equal(result.code, 7);
    assert.equal(result.signal, null);
    assert.equal(result.stdout.toString('utf8'), 'from stdin');
    assert.equal(result.stderr, 'complaint\n');
    assert.equal(result.killed, undefined);
  });

  test('a command that leaves most of its stdin unread ends normally', async () => {
    const result = await runSandboxed(spec, ['true'], { stdin: Buffer.alloc(8 * MB, 'x'), timeoutMs: 10_000, maxOutput: MB });
    assert.equal(result.code, 0);
    assert.equal(result.killed, undefined);
  });

  test('inside: nothing of the host, only the workspace writable, files owned by the uid on the host', async () => {
    const script = 'test ! -e /etc/passwd && test ! -e /root && ! touch /usr/x 2>/dev/null && echo written > out && pwd';
    const result = await runSandboxed(spec, ['sh', '-c', script], { timeoutMs: 10_000, maxOutput: MB });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.toString('utf8'), '/job\n');
    assert.equal((await stat(join(workspace, 'out'))).uid, UID ?? process.getuid!());
  });

  test('the prlimit caps apply: a file past fileBytes kills the writer', async () => {
    const result = await runSandboxed(spec, ['sh', '-c', 'head -c 2000000 /dev/zero > big'], { timeoutMs: 10_000, maxOutput: MB });
    // RLIMIT_FSIZE kills with SIGXFSZ, which the shell reports as 128 + 25.
    assert.equal(result.code, 128 + 25);
    assert.equal((await stat(join(workspace, 'big'))).size, MB);
  });

  test('a timeout kills the command and everything it started', async () => {
    const started = performance.now();
    const result = await runSandboxed(spec, ['sh', '-c', 'sleep 30 & sleep 30 & wait'], { timeoutMs: 300, maxOutput: MB });
    assert.equal(result.killed, 'timeout');
    assert.equal(result.code, null);
    assert.equal(result.signal, 'SIGKILL');
    assert.ok(performance.now() - started < 5000);
    assert.equal(await settledLeftovers(UID), '');
  });

  test('stdout past maxOutput kills the command; only what fit is kept', async () => {
    const result = await runSandboxed(spec, ['sh', '-c', 'cat /dev/zero & wait'], { timeoutMs: 10_000, maxOutput: MB });
    assert.equal(result.killed, 'output');
    assert.ok(result.stdout.length <= MB, `${result.stdout.length} bytes kept`);
    assert.equal(await settledLeftovers(UID), '');
  });

  test('an isolated command is started by the launcher, never by forking this process (issue 37)', async () => {
    const children = async () => {
      const names: string[] = [];
      for (const pid of await readdir('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        if (new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)) names.push(/^Name:\s+(.*)$/m.exec(status)?.[1] ?? '?');
      }
      return names;
    };
    const running = runSandboxed(spec, ['sleep', '1'], { timeoutMs: 10_000, maxOutput: MB });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const seen = await children();
    assert.equal((await running).code, 0);
    // The launcher (perl) is our child; bubblewrap is its child, not ours.
    assert.ok(!seen.includes('bwrap'), `children of the service: ${seen.join(', ')}`);
    // Negative control: the same command without isolation is forked by us.
    const forked = runSandboxed({ ...spec, isolate: false }, ['sleep', '1'], { timeoutMs: 10_000, maxOutput: MB });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const direct = await children();
    await forked;
    assert.ok(direct.includes('prlimit') || direct.includes('sleep'), `children of the service: ${direct.join(', ')}`);
  });

  test('without isolation the same limits apply, in the workspace as working directory', async () => {
    const result = await runSandboxed({ ...spec, isolate: false }, ['sh', '-c', 'pwd; ulimit -f'], { timeoutMs: 10_000, maxOutput: MB });
    assert.equal(result.code, 0, result.stderr);
    // ulimit -f counts 512-byte blocks.
    assert.equal(result.stdout.toString('utf8'), `${workspace}\n${MB / 512}\n`);
  });

  test('a command that cannot start rejects', async () => {
    const unlimited = { workspace, env: {}, isolate: false, uid: UID, root: undefined };
    await assert.rejects(runSandboxed(unlimited, ['/nonexistent/quire-command'], { timeoutMs: 10_000, maxOutput: MB }), /ENOENT/);
  });
});
