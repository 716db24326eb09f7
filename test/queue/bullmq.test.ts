// The BullMQ compile queue in one process: a real Redis (127.0.0.1:6379 or QUIRE_TEST_REDIS),
// a real blob store, real TeX in the sandbox. Jobs travel by reference and leave nothing of
// the document in Redis or the store; the worker enforces the job's timeout; a full queue, a
// queue without workers and an unreachable Redis give retryable 503s. The multi-process
// cluster (API nodes, workers, SIGKILL, restarts) is test/scale/cluster.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { BullTexQueue } from '../../src/queue/bullmq.js';
import { ManualClock } from '../../src/clock.js';
import { bullPrefix, jobPrefix, QUEUE_NAME, sha256, TRANSFER_MS } from '../../src/queue/contract.js';
import { processJob, startCompileWorker, type CompileWorker } from '../../src/queue/worker.js';
import { ServiceError } from '../../src/errors.js';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import { domainQueue } from '../../src/queue/domain.js';
import { LocalTexPool } from '../../src/queue/local-pool.js';
import type { TexQueue } from '../../src/queue/queue.js';
import type { TexJob } from '../../src/tex/job.js';
import { TexRunner } from '../../src/tex/runner.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const MB = 1024 * 1024;
const log = pino({ level: 'silent' });
const notMerging = async (): Promise<never> => assert.fail('no merge in this test');
const doc = (body: string) => `\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n${body}\n\\end{document}\n`;

function text(pdf: Buffer | undefined): string {
  assert.ok(pdf, 'a PDF');
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
}

/** Every byte Redis holds under `prefix`: strings, hashes, lists, sets, zsets and streams. */
async function redisBytes(redis: Redis, prefix: string): Promise<string> {
  let all = '';
  for (const key of await redis.keys(`${prefix}*`)) {
    const dump = await redis.dumpBuffer(key);
    all += `${key}\n${dump?.toString('latin1') ?? ''}\n`;
    if ((await redis.type(key)) === 'stream') all += JSON.stringify(await redis.xrange(key, '-', '+'));
  }
  return all;
}

/** The job files left in the blob store, once the node's background cleanup has run (bounded). */
async function jobFiles(dir: string): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 50; i++) {
    left = await readdir(join(dir, 'blobs', 'jobs')).catch(() => []);
    if (left.length === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return left;
}

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ServiceError, `a ServiceError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

describe('BullMQ compile queue', () => {
  const prefix = `quire-test-${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  let dir: string;
  let blobs: LocalBlobStore;
  let pool: TexQueue;
  let worker: CompileWorker;
  let queue: BullTexQueue;
  /** Merges the worker ran: the API node's queue has no pool of its own to merge with. */
  let workerMerges = 0;
  const job = (source: string, extra: Partial<TexJob> = {}): TexJob => ({ source, compiler: 'pdflatex', timeoutMs: 20_000, maxFileBytes: 8 * MB, ...extra });

  before(async () => {
    redis = new Redis(REDIS_URL);
    dir = await mkdtemp(join(tmpdir(), 'quire-bullmq-'));
    blobs = new LocalBlobStore(join(dir, 'blobs'));
    const workRoot = await mkdtemp(join(tmpdir(), 'quire-jobs-'));
    pool = domainQueue(new LocalTexPool(new TexRunner({ workRoot, isolate: true, root: defaultImageRoot() }), 2, 2));
    const counted: TexQueue = { ...pool, merge: (merge) => ((workerMerges += 1), pool.merge(merge)) };
    worker = startCompileWorker({ redisUrl: REDIS_URL, redisPrefix: prefix, concurrency: 2, blobs, pool: counted, log });
    await worker.worker.waitUntilReady();
    queue = new BullTexQueue({ redisUrl: REDIS_URL, redisPrefix: prefix, blobs, queueLimit: 10, log });
  });
  after(async () => {
    await queue.close();
    await worker.close();
    await pool.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  });

  test('a job runs on the worker with its files; afterwards nothing of it is left in Redis or the blob store', async () => {
    const canary = `canary${randomBytes(8).toString('hex')}`;
    // A stored asset is referenced where it already is; an inline one travels under the job.
    const stored = Buffer.from(`stored ${canary}`);
    await blobs.put(`assets/${sha256(stored)}`, stored);
    const inline = Buffer.from(`inline ${canary}`);
    const result = await queue.run(
      job(doc(`\\hyphenpenalty=10000 Body ${canary}.\\par \\input{stored.tex}\\par \\input{inline.tex}`), {
        files: [
          { name: 'stored.tex', data: stored, blob: `assets/${sha256(stored)}` },
          { name: 'inline.tex', data: inline },
        ],
      }),
    );
    assert.equal(result.outcome, 'ok');
    assert.equal(result.pages, 1);
    const words = text(result.pdf).replace(/\s+/g, ' ');
    for (const part of [`Body ${canary}`, `stored ${canary}`, `inline ${canary}`]) assert.ok(words.includes(part), `${part} in ${words}`);
    assert.match(result.log, /Output written on main\.pdf/);

    assert.equal((await redisBytes(redis, prefix)).includes(canary), false, 'the source is gone from Redis');
    assert.deepEqual(await redis.keys(`${bullPrefix(prefix)}:${QUEUE_NAME}:[0-9a-f]*-*`), [], 'no job hash is left');
    assert.deepEqual(await jobFiles(dir), [], 'no job file is left in the blob store');
    assert.notEqual(await blobs.get(`assets/${sha256(stored)}`), null, 'the stored asset itself stays');
  });

  test('a stored asset deleted before the worker fetched it: the node sends its own copy', async () => {
    const data = Buffer.from('gone but copied');
    const result = await queue.run(job(doc('\\input{asset.tex}'), { files: [{ name: 'asset.tex', data, blob: `assets/${sha256(data)}` }] }));
    assert.equal(result.outcome, 'ok');
    assert.match(text(result.pdf), /gone but copied/);
    assert.deepEqual(await jobFiles(dir), []);
  });

  test('the worker enforces the job\'s timeout; a TeX failure comes back with its log', async () => {
    const started = Date.now();
    const looping = await queue.run(job(doc('\\def\\x{\\x}\\x'), { timeoutMs: 1500 }));
    assert.equal(looping.outcome, 'timeout');
    assert.ok(Date.now() - started < 10_000, `stopped in ${Date.now() - started} ms`);
    const broken = await queue.run(job(doc('\\undefinedmacro')));
    assert.equal(broken.outcome, 'failed');
    assert.match(broken.log, /Undefined control sequence/);
    assert.equal(broken.pdf, undefined);
  });

  test('a batch merge runs on the worker: the PDFs cross the blob store, qpdf joins them there, nothing is left', async () => {
    const canary = `merge${randomBytes(8).toString('hex')}`;
    const [first, second] = await Promise.all([queue.run(job(doc(`First ${canary}.`))), queue.run(job(doc(`Second ${canary}.\\newpage Third.`)))]);
    const before = workerMerges;
    const merged = await queue.merge({ pdfs: [first.pdf!, second.pdf!], maxBytes: 8 * MB });
    assert.equal(workerMerges, before + 1);
    assert.equal(merged.pages, 3);
    assert.match(text(merged.pdf), new RegExp(`First ${canary}[\\s\\S]*Second ${canary}[\\s\\S]*Third`));
    assert.deepEqual(await jobFiles(dir), []);
    assert.doesNotMatch(await redisBytes(redis, prefix), new RegExp(canary));
  });

  test('a merge qpdf cannot do fails with a plain error (the batch reports merge_error), leaving nothing', async () => {
    const failed = await queue.merge({ pdfs: [Buffer.from('not a PDF'), Buffer.from('%PDF-1.4 broken')], maxBytes: MB }).then(
      () => assert.fail('the merge should fail'),
      (err: unknown) => err,
    );
    assert.ok(failed instanceof Error && !(failed instanceof ServiceError));
    assert.equal(failed.message, 'qpdf could not merge the PDFs (see the worker log)');
    assert.deepEqual(await jobFiles(dir), []);
  });

  test('input the runner refuses comes back as the same ServiceError', async () => {
    const err = await rejection(queue.run(job(doc('x'), { files: [{ name: 'main.aux', data: Buffer.from('x') }] })));
    assert.equal(err.code, 'invalid_asset_filename');
    assert.equal(err.status, 422);
    assert.equal(err.details.name, 'main.aux');
  });

  test('processJob: past its deadline a job is not run and leaves nothing', async () => {
    let ran = false;
    const data = { source: 'x', compiler: 'pdflatex' as const, files: [], timeoutMs: 10_000, maxFileBytes: MB, deadline: Date.now() + 1000, prefix: jobPrefix('late') };
    const returned = await processJob(data, { blobs, pool: { run: async () => ((ran = true), { outcome: 'ok', log: '', passes: 1, durationMs: 1 }), merge: notMerging } });
    assert.deepEqual(returned, { stored: false });
    assert.equal(ran, false);
    assert.deepEqual(await jobFiles(dir), []);
  });

  test('processJob reads the deadline from the injected clock: past it per a ManualClock, the job is not run, without waiting', async () => {
    let ran = false;
    // An hour ahead of the system clock, but a second behind the job's own clock.
    const deadline = Date.now() + 3_600_000;
    const clock = new ManualClock(new Date(deadline + 1000));
    const data = { source: 'x', compiler: 'pdflatex' as const, files: [], timeoutMs: 10_000, maxFileBytes: MB, deadline, prefix: jobPrefix('late-clock') };
    const started = Date.now();
    const returned = await processJob(data, { blobs, clock, pool: { run: async () => ((ran = true), { outcome: 'ok', log: '', passes: 1, durationMs: 1 }), merge: notMerging } });
    assert.deepEqual(returned, { stored: false });
    assert.equal(ran, false);
    assert.ok(Date.now() - started < 1000, 'refused at once');
    assert.deepEqual(await jobFiles(dir), []);
  });

  test('without workers: a full queue answers 503 server_busy at once; a waiting job gives up retryably and leaves Redis', async () => {
    const lonely = `quire-test-${randomBytes(4).toString('hex')}:`;
    const idle = new BullTexQueue({ redisUrl: REDIS_URL, redisPrefix: lonely, blobs, queueLimit: 1, log, queueWaitMs: 200 });
    try {
      await assert.rejects(idle.ping(), /no compile worker/);
      const started = Date.now();
      const waiting = rejection(idle.run(job(doc('waits'), { timeoutMs: 300 })));
      // Let the first job reach the queue.
      for (let i = 0; i < 50 && idle.stats().running === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      const full = await rejection(idle.run(job(doc('refused'))));
      assert.equal(full.code, 'server_busy');
      assert.equal(full.status, 503);
      assert.equal(full.details.retryable, true);
      assert.equal(full.headers['retry-after'], '5');

      const late = await waiting;
      assert.equal(late.code, 'server_busy');
      assert.equal(late.details.retryable, true);
      const waited = Date.now() - started;
      assert.ok(waited >= 500 && waited < 200 + 300 + TRANSFER_MS + 3000, `gave up after ${waited} ms`);
      assert.equal(await redis.llen(`${bullPrefix(lonely)}:${QUEUE_NAME}:wait`), 0, 'the job left the queue');
    } finally {
      await idle.close();
      const keys = await redis.keys(`${lonely}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });

  test('Redis unreachable: 503 redis_unavailable at once, not a hang', async () => {
    const down = new BullTexQueue({ redisUrl: 'redis://127.0.0.1:1', redisPrefix: prefix, blobs, queueLimit: 10, log });
    try {
      const started = Date.now();
      const err = await rejection(down.run(job(doc('x'))));
      assert.equal(err.code, 'redis_unavailable');
      assert.equal(err.status, 503);
      assert.equal(err.details.retryable, true);
      assert.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
      await assert.rejects(down.ping());
    } finally {
      await down.close();
    }
  });
});
