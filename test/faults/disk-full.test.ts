// A full disk under the blob store (a real 256 KiB tmpfs, filled up): writes fail with 507
// storage_full, retryable with Retry-After; no temp file is left; nothing half-written is
// ever served; the compile costs no quota; /health says so; and once space is back,
// everything works. Needs root (mount).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ServiceError } from '../../src/errors.js';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import { createAccount, HELLO, testApp } from '../helpers.js';

const run = promisify(execFile);

describe('a full disk under the blob store', () => {
  let dir: string;
  let store: LocalBlobStore;
  const filler = () => join(dir, 'filler');

  /** Writes until the filesystem refuses: afterwards not one more block fits. */
  async function fill(): Promise<void> {
    await writeFile(filler(), Buffer.alloc(1024 * 1024)).then(
      () => assert.fail('the filler should not fit'),
      (err: NodeJS.ErrnoException) => assert.equal(err.code, 'ENOSPC'),
    );
  }

  async function leftovers(): Promise<string[]> {
    return (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.tmp'));
  }

  const isStorageFull = (err: unknown) => {
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, 'storage_full');
    assert.equal(err.status, 507);
    assert.deepEqual(err.body(), {
      error: 'storage_full',
      message: 'The server has no room to store this right now; retry later.',
      retryable: true,
      retry_after_seconds: 60,
    });
    assert.deepEqual(err.headers, { 'retry-after': '60' });
    return true;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-full-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]);
    store = new LocalBlobStore(dir);
  });
  after(async () => {
    await run('umount', [dir]);
    await rmdir(dir);
  });

  test('put and putStream fail with storage_full, leave no temp file and publish nothing', async () => {
    await store.put('assets/kept', Buffer.from('the old version'));
    await fill();
    await assert.rejects(store.put('pdfs/new.pdf', randomBytes(64 * 1024)), isStorageFull);
    await assert.rejects(store.putStream('assets/streamed', Readable.from([randomBytes(64 * 1024), randomBytes(64 * 1024)]), 128 * 1024), isStorageFull);
    await assert.rejects(store.put('assets/kept', randomBytes(64 * 1024)), isStorageFull);
    assert.deepEqual(await leftovers(), []);
    assert.equal(await store.get('pdfs/new.pdf'), null);
    assert.equal(await store.size('assets/streamed'), null);
    assert.equal((await store.get('assets/kept'))?.toString(), 'the old version', 'a failed overwrite keeps the old blob whole');
    await rm(filler());
  });

  test('a compile on a full disk: 507 storage_full, no quota spent, /health 503; then it works again', async () => {
    const t = await testApp({ overrides: { blobs: store } });
    try {
      const account = await createAccount(t.services, 'pro');
      await fill();
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(res.statusCode, 507, res.body);
      assert.equal(res.json().error, 'storage_full');
      assert.equal(res.json().retryable, true);
      assert.equal(res.headers['retry-after'], '60');
      assert.deepEqual(await leftovers(), []);
      assert.deepEqual(await t.services.db.kysely.selectFrom('pdfs').selectAll().execute(), [], 'no link to a PDF that was not stored');
      const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
      assert.equal(usage.usage.used_this_month, 0);

      const health = await t.app.inject({ url: '/health' });
      assert.equal(health.statusCode, 503);
      assert.equal(health.json().blob_store.ok, false);
      assert.match(health.json().blob_store.error, /ENOSPC/);

      await rm(filler());
      const ok = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(ok.statusCode, 200, ok.body);
      const url = new URL(ok.json().pdf_url);
      const pdf = await t.app.inject({ url: url.pathname + url.search });
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
      assert.equal(Number(pdf.headers['content-length']), pdf.rawPayload.length);
      assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
