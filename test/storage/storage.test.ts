import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import { migrate } from '../../src/storage/db.js';
import { DB_KINDS, testServices, type TestServices } from '../helpers.js';
import { counterContract } from './counter-contract.js';

for (const db of DB_KINDS) {
  describe(`counters on ${db}`, () => {
    let services: TestServices;
    before(async () => {
      services = await testServices({ db });
    });
    after(() => services.cleanup());

    test('migrations are idempotent', async () => {
      await migrate(services.db);
      await migrate(services.db);
    });

    counterContract(() => services.counters);

    test('clearing reservations keeps what was used', async () => {
      const expires = new Date(Date.now() + 86_400_000);
      await services.counters.tryReserve('k:clear', 5, expires);
      await services.counters.commit('k:clear');
      await services.counters.tryReserve('k:clear', 5, expires);
      await services.counters.clearReservations();
      assert.deepEqual(await services.counters.get('k:clear'), { used: 1, reserved: 0 });
    });

    test('sweep drops expired counters only', async () => {
      await services.counters.tryReserve('k:old', 5, new Date(Date.now() - 1000));
      await services.counters.tryReserve('k:new', 5, new Date(Date.now() + 100_000));
      await services.counters.sweep(new Date());
      const keys = (await services.db.kysely.selectFrom('counters').select('key').execute()).map((r) => r.key);
      assert.ok(!keys.includes('k:old'));
      assert.ok(keys.includes('k:new'));
    });
  });
}

describe('local blob store', () => {
  let dir: string;
  let store: LocalBlobStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-blobs-'));
    store = new LocalBlobStore(dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('put, get, size, range stream and delete', async () => {
    await store.put('a/b.bin', Buffer.from('hello world'));
    assert.equal((await store.get('a/b.bin'))?.toString(), 'hello world');
    assert.equal(await store.size('a/b.bin'), 11);
    const stream = await store.stream('a/b.bin', { start: 6, end: 10 });
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'world');
    await store.delete('a/b.bin');
    assert.equal(await store.get('a/b.bin'), null);
    assert.equal(await store.stream('a/b.bin'), null);
  });

  test('writes are atomic: no temp files remain and overwrites replace whole', async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.put('race', Buffer.alloc(1000, i))));
    const bytes = (await store.get('race'))!;
    assert.ok(bytes.every((b) => b === bytes[0]));
    assert.deepEqual(await readdir(dir), ['a', 'race']);
  });

  test('keys cannot escape the root', async () => {
    for (const key of ['../x', '/etc/passwd', 'a/../../x', '.hidden', '']) {
      await assert.rejects(store.put(key, Buffer.from('x')), /invalid blob key/);
    }
  });
});
