// The worker's rules for a batch merge's payload, with a real blob store and a pool that
// records what it was given (qpdf itself: test/queue/local-pool.test.ts, bullmq.test.ts):
// inputs come by key and checksum, a missing one is reported, a qpdf failure is a result
// (not a retry), and past the deadline nothing is run or kept.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jobPrefix, pdfKey, resultKey, sha256, type RemoteMergeData } from '../../src/queue/contract.js';
import { processMerge } from '../../src/queue/process.js';
import type { MergeJob } from '../../src/queue/queue.js';
import { LocalBlobStore } from '../../src/storage/blobs.js';

describe('processMerge', () => {
  let dir: string;
  let blobs: LocalBlobStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-process-'));
    blobs = new LocalBlobStore(join(dir, 'blobs'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function payload(name: string, parts: Buffer[], deadline = Date.now() + 60_000): Promise<RemoteMergeData> {
    const prefix = jobPrefix(name);
    const files = [];
    for (const [i, part] of parts.entries()) {
      const key = `${prefix}-in-${sha256(part)}`;
      await blobs.put(key, part);
      files.push({ name: `in-${i}.pdf`, key, sha256: sha256(part) });
    }
    return { files, maxBytes: 4096, deadline, prefix };
  }
  const stored = async (prefix: string) => JSON.parse((await blobs.get(resultKey(prefix)))!.toString('utf8'));

  test('the PDFs reach the pool in order; the merged PDF and its page count are left for the API node', async () => {
    const given: MergeJob[] = [];
    const pool = { run: async () => assert.fail('no TeX here'), merge: async (job: MergeJob) => (given.push(job), { pdf: Buffer.from('merged'), pages: 5 }) };
    const data = await payload('ok', [Buffer.from('a'), Buffer.from('b')]);
    assert.deepEqual(await processMerge(data, { blobs, pool }), { stored: true });
    assert.deepEqual(given, [{ pdfs: [Buffer.from('a'), Buffer.from('b')], maxBytes: 4096 }]);
    assert.deepEqual(await stored(data.prefix), { kind: 'merged', pages: 5 });
    assert.deepEqual(await blobs.get(pdfKey(data.prefix)), Buffer.from('merged'));
  });

  test('a missing or altered input is input_missing; a qpdf failure is merge_failed', async () => {
    const pool = { run: async () => assert.fail('no TeX here'), merge: async () => Promise.reject(new Error('qpdf exited 2')) };
    const altered = await payload('altered', [Buffer.from('a'), Buffer.from('b')]);
    await blobs.put(altered.files[1]!.key, Buffer.from('changed'));
    assert.deepEqual(await processMerge(altered, { blobs, pool }), { stored: true });
    assert.deepEqual(await stored(altered.prefix), { kind: 'input_missing', names: ['in-1.pdf'] });
    const failing = await payload('failing', [Buffer.from('a')]);
    assert.deepEqual(await processMerge(failing, { blobs, pool }), { stored: true });
    assert.deepEqual(await stored(failing.prefix), { kind: 'merge_failed' });
    assert.equal(await blobs.get(pdfKey(failing.prefix)), null);
  });

  test('past its deadline a merge is not run and leaves no result', async () => {
    let ran = false;
    const pool = { run: async () => assert.fail('no TeX here'), merge: async () => ((ran = true), { pdf: Buffer.from('x'), pages: 1 }) };
    const data = await payload('late', [Buffer.from('a')], Date.now() + 1000);
    assert.deepEqual(await processMerge(data, { blobs, pool }), { stored: false });
    assert.equal(ran, false);
    assert.equal(await blobs.get(resultKey(data.prefix)), null);
  });
});
