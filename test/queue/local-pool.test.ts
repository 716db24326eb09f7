// The local pool's slots with a runner that waits on the test (the real runner is
// test/tex/runner.test.ts): at most `concurrency` TeX jobs run, at most `queueLimit` wait,
// the next one is refused at once with QueueFullError, and a PDF merge takes a slot like a
// TeX job does (real qpdf in the sandbox).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LocalTexPool } from '../../src/queue/local-pool.js';
import { QueueFullError } from '../../src/tex/errors.js';
import type { JobRunner, TexJob, TexResult } from '../../src/tex/job.js';

const job: TexJob = { source: 'x', compiler: 'pdflatex', timeoutMs: 1000, maxFileBytes: 1024 };
const ok: TexResult = { outcome: 'ok', log: '', passes: 1, durationMs: 1 };

/** A runner whose runs end when the test says so. */
function heldRunner() {
  const held: Array<() => void> = [];
  const runner = {
    run: () => new Promise<TexResult>((resolve) => held.push(() => resolve(ok))),
    start: async () => [],
    close: async () => {},
  } satisfies JobRunner;
  return { runner, held };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('local TeX pool', () => {
  test('runs at most `concurrency`, queues up to `queueLimit`, refuses the next at once', async () => {
    const { runner, held } = heldRunner();
    const pool = new LocalTexPool(runner, 2, 1, true);
    const runs = [pool.run(job), pool.run(job), pool.run(job)];
    await settle();
    assert.deepEqual(pool.stats(), { running: 2, waiting: 1 });
    // Before any job finished the pool cannot tell how long the queue takes: 5 s.
    await assert.rejects(pool.run(job), (err: unknown) => err instanceof QueueFullError && err.retryAfterSeconds === 5);
    held.shift()!();
    await settle();
    assert.deepEqual(pool.stats(), { running: 2, waiting: 0 });
    held.shift()!();
    await settle();
    held.shift()!();
    assert.deepEqual(await Promise.all(runs), [ok, ok, ok]);
    assert.deepEqual(pool.stats(), { running: 0, waiting: 0 });
  });

  test("a full queue's Retry-After is the time its jobs need, from how long jobs held a slot", async () => {
    const { runner, held } = heldRunner();
    const pool = new LocalTexPool(runner, 1, 1, true);
    const first = pool.run(job);
    await settle();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    held.shift()!();
    await first;
    const runs = [pool.run(job), pool.run(job)];
    await settle();
    // One waiting and the caller, 1.2 s each, one slot: 2.4 s.
    await assert.rejects(pool.run(job), (err: unknown) => err instanceof QueueFullError && err.retryAfterSeconds === 3);
    held.shift()!();
    await settle();
    held.shift()!();
    await Promise.all(runs);
  });

  test('an interactive job that would wait past the bound is refused; another caller’s and background jobs still wait', async () => {
    const { runner, held } = heldRunner();
    const pool = new LocalTexPool(runner, 1, 10, true, 2500);
    const a = { caller: 'account:a', background: false };
    const first = pool.run(job);
    await settle();
    await new Promise((resolve) => setTimeout(resolve, 900));
    held.shift()!();
    await first;
    // A job holds the slot about 0.9 s. a's first runs; behind it its second waits ~0.9 s, its third ~1.8 s, its fourth would ~2.7 s.
    const runs = [1, 2, 3].map(() => pool.run({ ...job, fairness: a }));
    await assert.rejects(pool.run({ ...job, fairness: a }), (err: unknown) => err instanceof QueueFullError && err.retryAfterSeconds === 3);
    assert.deepEqual(pool.stats(), { running: 1, waiting: 2 });
    // b has one job ahead of it (a's first: turns alternate), a background job no time bound.
    runs.push(pool.run({ ...job, fairness: { caller: 'account:b', background: false } }), pool.run({ ...job, fairness: { caller: 'account:a', background: true } }));
    await settle();
    assert.deepEqual(pool.stats(), { running: 1, waiting: 4 });
    for (let i = 0; i < 5; i++) {
      held.shift()!();
      await settle();
    }
    assert.equal((await Promise.all(runs)).length, 5);
  });

  test('a merge waits for a slot like a TeX job, then joins the PDFs in order', async () => {
    const { runner, held } = heldRunner();
    const pool = new LocalTexPool(runner, 1, 4, true);
    const running = pool.run(job);
    const merging = pool.merge({ pdfs: [onePage(100), onePage(300)], maxBytes: 1024 * 1024 });
    await settle();
    assert.deepEqual(pool.stats(), { running: 1, waiting: 1 });
    held.shift()!();
    await running;
    const merged = await merging;
    assert.equal(merged.pages, 2);
    assert.equal(merged.pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    // In order: the first page is the 100 pt one.
    assert.match(merged.pdf.toString('latin1'), /MediaBox\s*\[\s*0 0 100 100\s*\][\s\S]*MediaBox\s*\[\s*0 0 300 300\s*\]/);
    assert.deepEqual(pool.stats(), { running: 0, waiting: 0 });
  });
});

/** A one-page PDF of `size` pt square (qpdf rebuilds its missing cross-reference table). */
function onePage(size: number): Buffer {
  return Buffer.from(
    `%PDF-1.4
1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj
2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj
3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 ${size} ${size}]>>endobj
trailer<</Root 1 0 R>>
%%EOF
`,
  );
}
