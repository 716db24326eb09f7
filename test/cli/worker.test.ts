// `quire worker` as an operator runs it: it needs QUIRE_QUEUE=bullmq, refuses to run TeX
// without a working sandbox, serves /health and /metrics on QUIRE_WORKER_PORT (engines, queue
// connection, jobs running, last job; 503 while Redis is down), and on SIGTERM finishes, removes
// its job folder and exits 0. Its jobs are exercised in test/queue/bullmq.test.ts and
// test/scale/cluster.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { BullTexQueue } from '../../src/queue/bullmq.js';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import type { TexJob } from '../../src/tex/job.js';
import { privateRedis, type PrivateRedis } from '../faults/servers.js';
import { startProc, stopProc, waitFor, type Proc } from '../scale/processes.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const LIMIT = { timeout: 90_000 };
const MB = 1024 * 1024;

interface Health {
  status: string;
  version: string;
  queue: { ok: boolean; connection: string };
  engines: Record<string, { available: boolean; version?: string }>;
  jobs_running: number;
  concurrency: number;
  last_job_at: string | null;
  sandbox: boolean;
}

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
  const bullmq = () => ({ QUIRE_QUEUE: 'bullmq', QUIRE_REDIS_URL: REDIS_URL, QUIRE_REDIS_PREFIX: `quire-test-${randomBytes(4).toString('hex')}:`, QUIRE_WORKER_PORT: '0' });

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

  test('serves /health and /metrics on QUIRE_WORKER_PORT (0: a free port, logged); 503 while Redis is down', { timeout: 180_000 }, async () => {
    const redis: PrivateRedis = await privateRedis();
    const data = join(dir, 'health');
    // Its own TMPDIR: the work root then holds only this worker's job folder.
    const tmp = join(dir, 'health-tmp');
    await mkdir(tmp);
    await chmod(tmp, 0o755);
    const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
    const queue = new BullTexQueue({ redisUrl: redis.url, redisPrefix: prefix, blobs: new LocalBlobStore(join(data, 'blobs')), queueLimit: 10, log: pino({ level: 'silent' }) });
    try {
      const run = worker({
        QUIRE_QUEUE: 'bullmq',
        QUIRE_REDIS_URL: redis.url,
        QUIRE_REDIS_PREFIX: prefix,
        QUIRE_DATA_DIR: data,
        QUIRE_COMPILE_CONCURRENCY: '2',
        QUIRE_WORKER_PORT: '0',
        HOST: '127.0.0.1',
        TMPDIR: tmp,
      });
      await waitFor('the worker to be ready', async () => (run.output().includes('quire worker ready') ? true : null), 60_000, run);
      const served = run.output().split('\n').find((line) => line.includes('worker health and metrics served'));
      assert.ok(served, run.output());
      const port = (JSON.parse(served) as { port: number }).port;
      assert.ok(port > 0 && port !== 9090, 'a port picked by the system');
      const url = `http://127.0.0.1:${port}`;
      const health = async () => {
        const res = await fetch(`${url}/health`);
        assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
        return { status: res.status, body: (await res.json()) as Health };
      };
      const metrics = async () => {
        const res = await fetch(`${url}/metrics`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        return res.text();
      };

      const first = await health();
      assert.equal(first.status, 200);
      assert.deepEqual({ ...first.body, engines: undefined, version: undefined }, {
        status: 'ok',
        queue: { ok: true, connection: 'ready' },
        engines: undefined,
        version: undefined,
        jobs_running: 0,
        concurrency: 2,
        last_job_at: null,
        sandbox: true,
      });
      assert.match(first.body.version, /^\d+\.\d+\.\d+$/);
      for (const engine of ['pdflatex', 'xelatex', 'lualatex']) assert.equal(first.body.engines[engine]?.available, true, engine);
      const quiet = await metrics();
      for (const line of ['quire_worker_jobs_running 0', 'quire_worker_last_job_timestamp_seconds 0', 'quire_worker_queue_connected 1']) assert.ok(quiet.split('\n').includes(line), line);
      assert.match(quiet, /^quire_process_cpu_user_seconds_total \d/m);
      assert.equal((await fetch(`${url}/other`)).status, 404);

      // A job that loops until its timeout: seen running, then ended.
      const job = (source: string, timeoutMs: number): TexJob => ({ source, compiler: 'pdflatex', timeoutMs, maxFileBytes: 8 * MB });
      const looping = queue.run(job('\\documentclass{article}\\begin{document}\\def\\x{\\x}\\x\\end{document}', 6000));
      await waitFor('the job to be running', async () => ((await health()).body.jobs_running === 1 ? true : null), 20_000, run);
      assert.ok((await metrics()).split('\n').includes('quire_worker_jobs_running 1'));
      assert.equal((await looping).outcome, 'timeout');
      const before = Date.now();
      assert.equal((await queue.run(job('\\documentclass{article}\\begin{document}Watched.\\end{document}', 20_000))).outcome, 'ok');
      const after = await health();
      assert.equal(after.status, 200);
      assert.equal(after.body.jobs_running, 0);
      const last = Date.parse(after.body.last_job_at ?? '');
      assert.ok(last >= before - 1000 && last <= Date.now(), `last_job_at ${after.body.last_job_at}`);
      const busy = await metrics();
      assert.match(busy, /^quire_worker_job_duration_seconds_count\{name="compile",outcome="ok"\} 2$/m);
      const stamp = Number(/^quire_worker_last_job_timestamp_seconds (\S+)$/m.exec(busy)?.[1]);
      assert.ok(Math.abs(stamp * 1000 - last) < 1000, `${stamp} vs ${last}`);

      // Redis gone: 503 with the connection state; back: 200.
      await redis.kill();
      const down = await waitFor('the worker to see Redis gone', async () => {
        const h = await health();
        return h.status === 503 ? h : null;
      }, 20_000, run);
      assert.equal(down.body.status, 'degraded');
      assert.equal(down.body.queue.ok, false);
      assert.notEqual(down.body.queue.connection, 'ready');
      assert.ok((await metrics()).split('\n').includes('quire_worker_queue_connected 0'));
      await redis.start();
      await waitFor('the worker to reconnect', async () => ((await health()).status === 200 ? true : null), 30_000, run);

      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0, run.output());
      assert.deepEqual((await readdir(join(tmp, 'quire-jobs'))).filter((name) => /^p\d+-\d+$/.test(name)), [], 'no job folder is left');
    } finally {
      await queue.close();
      await redis.destroy();
    }
  });

  test('becomes ready, then on SIGTERM stops and exits 0', LIMIT, async () => {
    const run = worker(bullmq());
    await waitFor('the worker to be ready', async () => (run.output().includes('quire worker ready') ? true : null), 60_000, run);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /"msg":"worker stopped"/);
  });
});
