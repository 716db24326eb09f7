// Starting sandboxes while other processes do (session.ts, sandboxed.ts, uids.ts), with real
// sandboxes and real processes: a sandbox that cannot start says why (bubblewrap's stderr is in
// the error); RLIMIT_NPROC is counted per sandbox (its own user namespace), so a shared uid did
// not stop sandboxes from starting; and every process runs its jobs as the uids of a block no
// other live process holds, where the old rule (the pid modulo 1000) gave two processes the same uids.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, readlinkSync, symlinkSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { settledLeftovers } from './support.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { killSandboxed, launchSandboxed, runSandboxed, STDERR_HEAD } from '../../src/tex/sandbox/sandboxed.js';
import { sandboxed } from '../../src/tex/sandbox/sandbox.js';
import { Session } from '../../src/tex/sandbox/session.js';
import { claimUidBlock, CONVERTER_UID, MAX_SLOTS, releaseUidBlock, sandboxUid, SLOT_UID_BASE, slotUid, UID_BLOCKS, validatorUid, VALIDATOR_UIDS } from '../../src/tex/sandbox/uids.js';

// Below the slot uid range and the other TeX tests' uids.
const UID = sandboxUid(CONVERTER_UID - 9);
const ROOT = process.getuid?.() === 0;

/** A process of its own (uid-claimant.ts) holding a block and a sandbox on it until `end`. */
interface Claimant {
  child: ChildProcessWithoutNullStreams;
  block: number;
  /** The host uid its sandbox's bubblewrap runs as. */
  uid: number;
  end(): Promise<void>;
}

describe('sandbox starts among other processes', () => {
  let root: string;
  let folder: string;
  const running: ChildProcessWithoutNullStreams[] = [];
  // Sandboxes do not keep the process alive (a warm one waits for work): this does, while a test awaits one.
  let alive: NodeJS.Timeout;

  before(async () => {
    alive = setInterval(() => {}, 1000);
    root = await mkdtemp(join(tmpdir(), 'quire-start-'));
    // Job uids traverse it to their workspaces.
    await chmod(root, 0o711);
    folder = join(root, 'jobs');
    await mkdir(folder, { mode: 0o711 });
    await chmod(folder, 0o711);
  });
  after(async () => {
    clearInterval(alive);
    for (const child of running) child.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  });

  /** Starts a claimant over the claims folder `dir`: `claim` takes a block from `first` on; `old` uses `first` as it is. */
  const claimant = async (dir: string, mode: 'claim' | 'old', first: number): Promise<Claimant> => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'uid-claimant.ts'), dir, mode, String(first), folder], { stdio: ['pipe', 'pipe', 'pipe'] });
    running.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout });
    const [line] = (await Promise.race([once(lines, 'line'), once(child, 'close')])) as [string];
    assert.match(String(line), /^\d+ \d+$/, stderr);
    const [block, uid] = String(line).split(' ').map(Number) as [number, number];
    const end = async () => {
      const closed = once(child, 'close');
      child.stdin.end();
      await closed;
    };
    return { child, block, uid, end };
  };

  test('a sandbox that cannot start fails with bubblewrap\'s own words', async () => {
    const missing = join(root, 'no-formats-here');
    // A formats folder that is not there: bubblewrap cannot bind it and exits before the driver runs.
    const session = await Session.open(folder, UID, { isolate: true, root: defaultImageRoot(), env: {}, formats: missing });
    await assert.rejects(session.run(['true']), { message: `sandbox exited (1): bwrap: Can't find source path ${missing}: No such file or directory` });
    assert.equal(session.alive, false);
    await session.close();
    assert.equal(await settledLeftovers(UID), '');
  });

  test('a sandbox\'s stderr is kept up to its first 4 KB, and the rest is drained', async () => {
    const workspace = join(root, 'noisy');
    await mkdir(workspace, { mode: 0o700 });
    if (UID !== undefined) await chown(workspace, UID, UID);
    // 1 MB to stderr: undrained, the writer would block on a full pipe and never exit.
    const child = await launchSandboxed({ workspace, env: {}, isolate: true, root: defaultImageRoot(), uid: UID }, ['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" x >&2; exit 3']);
    child.stdin.end();
    const code = await new Promise((resolve) => child.once('close', resolve));
    assert.equal(code, 3);
    assert.equal(STDERR_HEAD, 4096);
    assert.equal(child.stderrHead(), 'x'.repeat(STDERR_HEAD));
  });

  test('RLIMIT_NPROC counts per sandbox: one forks under its limit of 32 while another of the same host uid holds 40 processes', async (t) => {
    if (UID === undefined) return t.diagnostic('not root: every sandbox runs as this user, no uid of its own');
    const workspaces = await Promise.all(['busy', 'forks', 'control'].map(async (name) => {
      const workspace = join(root, name);
      await mkdir(workspace, { mode: 0o700 });
      await chown(workspace, UID, UID);
      return workspace;
    }));
    const spec = (workspace: string) => ({ workspace, env: {}, isolate: true, root: defaultImageRoot(), uid: UID });
    const busy = await launchSandboxed(spec(workspaces[0]!), ['sh', '-c', 'for i in $(seq 40); do sleep 60 & done; echo ready; wait']);
    busy.stdin.end();
    await new Promise((resolve) => busy.stdout.once('data', resolve));
    try {
      assert.ok(Number(spawnSync('sh', ['-c', `ps -u ${UID} -o pid= | wc -l`], { encoding: 'utf8' }).stdout) > 40);
      const limits = { cpuSeconds: 10, fileBytes: 1 << 20, memoryBytes: 1 << 30, processes: 32 };
      const forks = await runSandboxed({ ...spec(workspaces[1]!), limits }, ['sh', '-c', 'sleep 0 & sleep 0 & wait; echo forked'], { timeoutMs: 20_000, maxOutput: 1 << 20 });
      assert.deepEqual([forks.code, forks.stdout.toString('utf8')], [0, 'forked\n'], forks.stderr);
      // Control: bubblewrap itself started under the limit counts every process of its host uid, and cannot start.
      const { file, args } = sandboxed(spec(workspaces[2]!), ['true']);
      const control = spawnSync('prlimit', ['--nproc=32', '--', file, ...args], { uid: UID, gid: UID, encoding: 'utf8', timeout: 20_000 });
      assert.equal(control.status, 1);
      assert.equal(control.stderr, 'bwrap: Creating new namespace failed: Resource temporarily unavailable\n');
    } finally {
      killSandboxed(busy);
    }
    assert.equal(await settledLeftovers(UID), '');
  });

  test('the uid blocks: slots and validators of one block never meet another block\'s', () => {
    assert.equal(slotUid(0, 0), SLOT_UID_BASE);
    assert.equal(slotUid(MAX_SLOTS - 1, 0) + 1, slotUid(0, 1));
    assert.equal(slotUid(MAX_SLOTS - 1, UID_BLOCKS - 1) + 1, validatorUid(0, 0));
    assert.equal(validatorUid(VALIDATOR_UIDS - 1, 0) + 1, validatorUid(0, 1));
    assert.ok(CONVERTER_UID < SLOT_UID_BASE);
  });

  test('negative control: with the old rule, two live processes whose pids agree modulo 1000 run their jobs as the same uid', async () => {
    // The old rule was block = pid % 1000; two processes given the same block stand for such a pair.
    const [a, b] = await Promise.all([claimant(join(root, 'unused'), 'old', 7), claimant(join(root, 'unused'), 'old', 7)]);
    assert.equal(a.block, b.block);
    assert.equal(a.uid, b.uid, 'both sandboxes run as one host uid');
    if (ROOT) assert.equal(a.uid, slotUid(0, 7));
    await Promise.all([a.end(), b.end()]);
  });

  test('processes that claim at once, all wanting the same block, each get a block of their own, and their sandboxes distinct uids', async () => {
    const dir = join(root, 'claims');
    const all = await Promise.all([...Array(4).keys()].map(() => claimant(dir, 'claim', 7)));
    assert.deepEqual(all.map((c) => c.block).sort((x, y) => x - y), [7, 8, 9, 10]);
    if (ROOT) assert.deepEqual(all.map((c) => c.uid).sort((x, y) => x - y), [7, 8, 9, 10].map((block) => slotUid(0, block)));
    // Each claim names its process: `<pid>-<start time>`.
    for (const c of all) assert.match(readlinkSync(join(dir, String(c.block))), new RegExp(`^${c.child.pid}-\\d+$`));
    await Promise.all(all.map((c) => c.end()));
    // A process that ends gives its block back.
    for (const block of [7, 8, 9, 10]) assert.equal(existsSync(join(dir, String(block))), false);
  });

  test('the block of a process killed with SIGKILL (its claim left behind) is taken by the next; a live one\'s never', async () => {
    const dir = join(root, 'stale');
    const live = await claimant(dir, 'claim', 20);
    const killed = await claimant(dir, 'claim', 20);
    assert.deepEqual([live.block, killed.block], [20, 21]);
    const closed = once(killed.child, 'close');
    killed.child.kill('SIGKILL');
    await closed;
    assert.ok(lstatSync(join(dir, '21')).isSymbolicLink(), 'the dead process left its claim');
    const next = await claimant(dir, 'claim', 20);
    assert.equal(next.block, 21);
    await Promise.all([live.end(), next.end()]);
  });

  test('a claim whose pid now names another process (another start time) is stale; one mid-takeover is left alone', async () => {
    const dir = join(root, 'reused');
    await mkdir(dir, { mode: 0o700 });
    const me = { pid: process.pid, start: '1' };
    // This pid with a start time it does not have: a process of the same pid before this one.
    symlinkSync(`${process.pid}-0`, join(dir, '30'));
    assert.equal(claimUidBlock(dir, me, 30), 30);
    assert.equal(readlinkSync(join(dir, '30')), `${process.pid}-1`);
    // A claim already ours is ours still.
    assert.equal(claimUidBlock(dir, me, 30), 30);
    // A takeover of a dead claimant's block that never finished (its taker killed in between): that block is skipped.
    const dead = spawnSync('true').pid!;
    symlinkSync(`${dead}-5`, join(dir, '31'));
    symlinkSync(`${dead}-6`, join(dir, `31.takeover-${dead}-5`));
    assert.equal(claimUidBlock(dir, { pid: dead, start: '7' }, 31), 32);
    assert.equal(readlinkSync(join(dir, '31')), `${dead}-5`);
    releaseUidBlock(dir, 30, me);
    assert.equal(existsSync(join(dir, '30')), false);
  });

  test('a claims folder others may write to is refused', async () => {
    const dir = join(root, 'open');
    await mkdir(dir, { mode: 0o777 });
    await chmod(dir, 0o777);
    assert.throws(() => claimUidBlock(dir), /is not this service's alone/);
  });
});
