// Quire beyond one machine, with real processes on loopback: two API nodes and two compile
// workers (QUIRE_QUEUE=bullmq) sharing PostgreSQL, Redis and the Ceph RADOS Gateway (S3),
// each node with its own empty data dir. PDFs and assets made through one node work through
// the other; 20 parallel compiles succeed; a worker SIGKILLed mid-compile costs the caller
// nothing but time and is charged once; a PostgreSQL restart and a Redis restart under load
// give only retryable 503s while down, then 200s, and no process dies.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freshPostgres } from '../helpers.js';
import { ensureRgw, freshBucket, type S3Env } from '../s3.js';
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from '../faults/servers.js';
import { startNode, startWorker, stopProc, waitFor, type Proc } from './processes.js';

type Node = Proc & { port: number; url: string };
const LIMIT = { timeout: 240_000 };
const HELLO = (text: string) => `\\documentclass{article}\n\\begin{document}\n${text}\n\\end{document}\n`;
/** A few seconds of TeX arithmetic: long enough to kill its worker mid-run. */
// Still running when its worker is killed (about 1.5 s after it starts): 24 million steps take
// about 6 s on a fast core (6 million once finished before the kill, and no retry came).
const SLOW = HELLO('\\newcount\\n \\loop\\advance\\n by 1 \\ifnum\\n<24000000 \\repeat Done \\the\\n');

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function post(node: Node, path: string, key: string, body: unknown): Promise<Answer> {
  const res = await fetch(`${node.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(150_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

async function used(node: Node, key: string): Promise<number> {
  const res = await fetch(`${node.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { usage: { used_this_month: number } }).usage.used_this_month;
}

/** The signed PDF link, fetched through `node` whichever node made it. */
async function download(node: Node, pdfUrl: string): Promise<Buffer> {
  const url = new URL(pdfUrl);
  const res = await fetch(`${node.url}${url.pathname}${url.search}`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

function createAccount(env: Record<string, string>): string {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'account', 'create', '--email', `c${randomBytes(4).toString('hex')}@example.com`, '--plan', 'pro', '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 90_000,
  });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as { api_key: string }).api_key;
}

/**
 * Compiles on both nodes, two at a time, while `fault` runs; stops `settleMs` after the fault
 * (bounded by count and time). Returns every answer in order.
 */
async function underLoad(nodes: Node[], key: string, fault: () => Promise<void>, settleMs: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stopAt = Infinity;
  const until = Date.now() + 150_000;
  const loop = async (lane: number) => {
    for (let i = 0; i < 400 && Date.now() < Math.min(stopAt, until); i++) {
      const node = nodes[(lane + i) % nodes.length]!;
      try {
        answers.push(await post(node, '/api/v1/compile', key, { latex: HELLO(`lane ${lane} request ${i}`) }));
      } catch (err) {
        answers.push({ status: 0, body: { error: String(err) }, headers: new Headers() });
      }
      if (answers.at(-1)!.status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
  };
  const lanes = [loop(0), loop(1)];
  await new Promise((r) => setTimeout(r, 1500));
  await fault();
  stopAt = Date.now() + settleMs;
  await Promise.all(lanes);
  return answers;
}

/** Status and error code of each answer, in order, for failure messages. */
function summary(answers: Answer[]): string {
  return answers.map((a) => (a.status === 200 ? '200' : `${a.status}:${String(a.body.error)}`)).join(' ');
}

function assertOnlyRetryable(answers: Answer[], codes: string[]): void {
  for (const answer of answers) {
    if (answer.status === 200) continue;
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.ok(codes.includes(String(answer.body.error)), JSON.stringify(answer.body));
    assert.equal(answer.body.retryable, true, JSON.stringify(answer.body));
    assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/);
  }
  // It recovered: the last answers are all successes.
  const tail = answers.slice(-4);
  assert.ok(tail.length === 4 && tail.every((a) => a.status === 200), JSON.stringify(tail.map((a) => [a.status, a.body.error])));
}

describe('a cluster of two API nodes and two workers', () => {
  let s3: S3Env;
  let redis: PrivateRedis;
  let shared: { url: string; drop: () => Promise<void> };
  let privatePg: PrivatePostgres | null = null;
  const dirs: string[] = [];
  const procs: Proc[] = [];
  let env: Record<string, string>;
  let a: Node;
  let b: Node;
  let workers: Proc[];
  let key: string;

  const nodeEnv = async (databaseUrl: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-node-'));
    dirs.push(dir);
    return { ...env, QUIRE_DATABASE_URL: databaseUrl, QUIRE_DATA_DIR: dir };
  };
  const node = async (name: string, databaseUrl: string) => {
    const started = await startNode(name, await nodeEnv(databaseUrl));
    procs.push(started);
    return started;
  };
  const worker = async (name: string) => {
    const started = await startWorker(name, await nodeEnv('sqlite:///nonexistent/unused.db'));
    procs.push(started);
    return started;
  };

  before(async () => {
    [s3, redis, shared] = await Promise.all([ensureRgw(), privateRedis(), freshPostgres()]);
    env = {
      ...(s3 as unknown as Record<string, string>),
      QUIRE_S3_BUCKET: freshBucket(),
      QUIRE_REDIS_URL: redis.url,
      QUIRE_QUEUE: 'bullmq',
      QUIRE_SECRET: 'cluster-secret-0123456789abcdef',
      QUIRE_COMPILE_CONCURRENCY: '2',
      QUIRE_COMPILE_QUEUE: '100',
      // Pro's 4 compiles in flight × 5: the burst below is about the cluster, not fair use.
      QUIRE_CALLER_CONCURRENCY_FACTOR: '5',
      LOG_LEVEL: 'info',
    };
    [a, b, ...workers] = await Promise.all([node('node A', shared.url), node('node B', shared.url), worker('worker 1'), worker('worker 2')]);
    key = createAccount(await nodeEnv(shared.url));
  }, { timeout: 240_000 });

  after(async () => {
    await Promise.all(procs.map((p) => stopProc(p, 'SIGKILL')));
    await redis?.destroy();
    await privatePg?.destroy();
    await shared?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a PDF made through node A downloads byte for byte through node B', LIMIT, async () => {
    const made = await post(a, '/api/v1/compile', key, { latex: HELLO('Made on A.') });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const viaA = await download(a, String(made.body.pdf_url));
    const viaB = await download(b, String(made.body.pdf_url));
    assert.equal(viaA.subarray(0, 5).toString(), '%PDF-');
    assert.ok(viaA.equals(viaB));
    const health = await fetch(`${b.url}/health`);
    const report = (await health.json()) as { queue: { ok: boolean }; redis: { ok: boolean }; blob_store: { ok: boolean } };
    assert.equal(health.status, 200, JSON.stringify(report));
    assert.deepEqual([report.queue.ok, report.redis.ok, report.blob_store.ok], [true, true, true]);
  });

  test('an asset stored through node A is used by a compile on node B', LIMIT, async () => {
    const logo = await readFile('test/fixtures/assets/logo.png');
    const stored = await post(a, '/api/v1/assets', key, { name: 'logo.png', content_base64: logo.toString('base64') });
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    const made = await post(b, '/api/v1/compile', key, {
      latex: '\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n\\includegraphics[width=2cm]{logo.png}\n\\end{document}\n',
      use_stored_assets: ['logo.png'],
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.deepEqual(made.body.stored_assets_used, ['logo.png']);
    const images = spawnSync('pdfimages', ['-list', '-'], { input: await download(a, String(made.body.pdf_url)), encoding: 'utf8' });
    assert.equal(images.stdout.trim().split('\n').length, 3, images.stdout);
  });

  test('20 parallel compiles across both nodes succeed, each charged once', LIMIT, async () => {
    const before = await used(a, key);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? b : a, '/api/v1/compile', key, { latex: HELLO(`Parallel ${i}.`) })),
    );
    assert.deepEqual(
      answers.map((x) => x.status),
      Array(20).fill(200),
      JSON.stringify(answers.filter((x) => x.status !== 200).map((x) => x.body)),
    );
    assert.equal(new Set(answers.map((x) => x.body.job_id)).size, 20);
    assert.equal(await used(b, key), before + 20);
  });

  test('a worker SIGKILLed mid-compile: the job runs again on the other worker, the caller gets its PDF, charged once', LIMIT, async () => {
    const before = await used(a, key);
    const marks = workers.map((w) => w.output().split('compile job started').length);
    const request = post(a, '/api/v1/compile', key, { latex: SLOW });
    const victim = await waitFor('a worker to start the slow job', async () => workers.find((w, i) => w.output().split('compile job started').length > marks[i]!) ?? null, 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    const survivor = workers.find((w) => w !== victim)!;
    const survivorMark = survivor.output().split('compile job started').length;
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await waitFor('the retry to start', async () => (survivor.output().split('compile job started').length > survivorMark ? true : null), 60_000);
    const retryMs = Date.now() - killedAt;
    const answer = await request;
    console.log(`# retry started ${retryMs} ms after the SIGKILL`);
    assert.ok(retryMs < 15_000, `retried after ${retryMs} ms`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(await used(a, key), before + 1);
    // Back to two workers for the rest.
    workers = [survivor, await worker('worker 3')];
  });

  test('PostgreSQL restarted under load: only retryable 503s while down, then 200s; no process dies', LIMIT, async () => {
    privatePg = await privatePostgres();
    const c = await node('node C', privatePg.url);
    const d = await node('node D', privatePg.url);
    const pgKey = createAccount(await nodeEnv(privatePg.url));
    const pg = privatePg;
    const answers = await underLoad(
      [c, d],
      pgKey,
      async () => {
        await pg.stop();
        await new Promise((r) => setTimeout(r, 3000));
        await pg.start();
      },
      8000,
    );
    console.log(`# during the PostgreSQL restart: ${summary(answers)}`);
    assert.ok(answers.some((x) => x.status === 503), `some requests met the outage: ${summary(answers)}`);
    assertOnlyRetryable(answers, ['database_unavailable']);
    for (const p of [a, b, c, d, ...workers]) assert.ok(p.alive(), `${p.name} is alive`);
    await Promise.all([stopProc(c), stopProc(d)]);
  });

  test('Redis restarted under load: only retryable 503s while down, then 200s; no process dies', LIMIT, async () => {
    const answers = await underLoad(
      [a, b],
      key,
      async () => {
        await redis.kill();
        await new Promise((r) => setTimeout(r, 3000));
        await redis.start();
      },
      10_000,
    );
    console.log(`# during the Redis restart: ${summary(answers)}`);
    assert.ok(answers.some((x) => x.status === 503), `some requests met the outage: ${summary(answers)}`);
    assertOnlyRetryable(answers, ['redis_unavailable', 'server_busy']);
    for (const p of [a, b, ...workers]) assert.ok(p.alive(), `${p.name} is alive`);
  });
});
