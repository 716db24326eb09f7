// The bench's cache labels (bench/caches.ts) read the service's own counters: a repeated
// request is labelled a result-cache hit, a fresh one none, over the compiles the service counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cacheLabel, cacheUse } from '../../bench/caches.js';
import { createAccount, HELLO, testApp } from '../helpers.js';

test('a row of one fresh and one repeated compile is labelled with the one result-cache hit', async () => {
  const t = await testApp();
  try {
    const alice = await createAccount(t.services, 'pro');
    const compile = async (latex: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex }, headers: alice.headers });
      assert.equal(res.statusCode, 200);
    };
    const registry = t.services.metrics.registry;
    const start = await cacheUse(registry);
    await compile(HELLO);
    const fresh = await cacheUse(registry);
    assert.equal(cacheLabel(start, fresh), 'cache hits of 1 compiles: none');
    await compile(HELLO);
    const after = await cacheUse(registry);
    assert.equal(cacheLabel(fresh, after), 'cache hits of 1 compiles: result 1');
    assert.equal(cacheLabel(start, after), 'cache hits of 2 compiles: result 1');
  } finally {
    await t.close();
  }
});
