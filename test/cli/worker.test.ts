// `quire worker` as an operator runs it: it needs QUIRE_QUEUE=bullmq, refuses to run TeX
// without a working sandbox, and on SIGTERM finishes and exits 0. Its jobs are exercised in
// test/queue/bullmq.test.ts and test/scale/cluster.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startProc, stopProc, waitFor, type Proc } from '../scale/processes.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const LIMIT = { timeout: 90_000 };

describe('quire worker', () => {
  let dir: string;
  let fakeBin: string;
  const procs: Proc[] = [];
  const worker = (env: Record<string, string>) => {
    const proc = startProc('worker', process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'worker'], {
      QUIRE_DATA_DIR: join(dir, randomBytes(4).toString('hex')),
      LOG_LEVEL: 'info',
      ...env,
    });
    procs.push(proc);
    return proc;
  };
  const bullmq = () => ({ QUIRE_QUEUE: 'bullmq', QUIRE_REDIS_URL: REDIS_URL, QUIRE_REDIS_PREFIX: `quire-test-${randomBytes(4).toString('hex')}:` });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-worker-'));
    await chmod(dir, 0o755);
    fakeBin = join(dir, 'bin');
    await mkdir(fakeBin);
    await writeFile(join(fakeBin, 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    await chmod(join(fakeBin, 'bwrap'), 0o755);
  });
  after(async () => {
    for (const proc of procs) await stopProc(proc, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test('without QUIRE_QUEUE=bullmq it says what to set and exits 2', LIMIT, async () => {
    const run = worker({});
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /set QUIRE_QUEUE=bullmq and QUIRE_REDIS_URL/);
  });

  test('refuses to start when the sandbox cannot run', LIMIT, async () => {
    const run = worker({ ...bullmq(), PATH: `${fakeBin}:${process.env.PATH}` });
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /sandbox \(bubblewrap\) cannot run/);
  });

  test('becomes ready, then on SIGTERM stops and exits 0', LIMIT, async () => {
    const run = worker(bullmq());
    await waitFor('the worker to be ready', async () => (run.output().includes('quire worker ready') ? true : null), 60_000, run);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /"msg":"worker stopped"/);
  });
});
