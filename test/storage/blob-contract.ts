// What every BlobStore must do, run against the local store and the S3 store alike.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import type { BlobStore } from '../../src/storage/blobs.js';

async function collect(stream: Readable | null): Promise<Buffer | null> {
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function blobContract(store: () => BlobStore): void {
  test('put then get, size and a full stream give the same bytes', async () => {
    const data = randomBytes(70_000);
    await store().put('pdfs/a.pdf', data);
    assert.deepEqual(await store().get('pdfs/a.pdf'), data);
    assert.equal(await store().size('pdfs/a.pdf'), data.length);
    assert.deepEqual(await collect(await store().stream('pdfs/a.pdf')), data);
  });

  test('a range streams exactly bytes start..end inclusive', async () => {
    const data = randomBytes(10_000);
    await store().put('pdfs/range.pdf', data);
    assert.deepEqual(await collect(await store().stream('pdfs/range.pdf', { start: 100, end: 199 })), data.subarray(100, 200));
    assert.deepEqual(await collect(await store().stream('pdfs/range.pdf', { start: 9_990, end: 9_999 })), data.subarray(9_990));
  });

  test('an overwrite replaces the whole blob', async () => {
    await store().put('assets/x', Buffer.from('first version, longer'));
    await store().put('assets/x', Buffer.from('second'));
    assert.equal((await store().get('assets/x'))?.toString(), 'second');
    assert.equal(await store().size('assets/x'), 6);
  });

  test('a missing key is null for get, stream and size; delete of a missing key is fine', async () => {
    assert.equal(await store().get('pdfs/none.pdf'), null);
    assert.equal(await store().stream('pdfs/none.pdf'), null);
    assert.equal(await store().stream('pdfs/none.pdf', { start: 0, end: 3 }), null);
    assert.equal(await store().size('pdfs/none.pdf'), null);
    await store().delete('pdfs/none.pdf');
  });

  test('delete removes the blob', async () => {
    await store().put('pdfs/gone.pdf', Buffer.from('x'));
    await store().delete('pdfs/gone.pdf');
    assert.equal(await store().get('pdfs/gone.pdf'), null);
    assert.equal(await store().size('pdfs/gone.pdf'), null);
  });

  test('a streamed upload of 3 MB in small chunks stores every byte', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const chunks = Array.from({ length: data.length / 65_536 }, (_, i) => data.subarray(i * 65_536, (i + 1) * 65_536));
    await store().putStream('assets/streamed', Readable.from(chunks), data.length);
    assert.equal(await store().size('assets/streamed'), data.length);
    assert.deepEqual(await store().get('assets/streamed'), data);
  });

  test('keys that climb out or are not plain paths are refused', async () => {
    for (const key of ['../escape', '/abs', 'a//b', 'a/../b', '']) {
      await assert.rejects(store().put(key, Buffer.from('x')), /invalid blob key/, key);
    }
  });

  test('ping writes and reads back', async () => {
    await store().ping();
  });
}
