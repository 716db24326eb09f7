// The object store unreachable: calls fail at once with storage_unavailable (503, retryable,
// Retry-After), /health says so, and a compile whose PDF cannot be stored costs no quota.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { S3BlobStore } from '../../src/storage/s3-blobs.js';
import { createAccount, HELLO, testApp } from '../helpers.js';
import { freePort } from './servers.js';

const credentials = { AWS_ACCESS_KEY_ID: 'quire-test-access', AWS_SECRET_ACCESS_KEY: 'quire-test-secret-0123456789abcdef', AWS_REGION: 'us-east-1' };

describe('S3 unreachable', () => {
  test('every call fails fast with storage_unavailable', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const store = S3BlobStore.create({ bucket: 'quire-nowhere', endpoint, region: 'us-east-1' }, { accessKeyId: 'a', secretAccessKey: 'b' });
    try {
      for (const call of [() => store.put('pdfs/x.pdf', Buffer.from('x')), () => store.get('pdfs/x.pdf'), () => store.size('pdfs/x.pdf')]) {
        const started = Date.now();
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof ServiceError);
          assert.equal(err.code, 'storage_unavailable');
          assert.equal(err.status, 503);
          assert.equal(err.body().retryable, true);
          assert.deepEqual(err.headers, { 'retry-after': '5' });
          return true;
        });
        assert.ok(Date.now() - started < 3000, 'no hanging on a dead endpoint');
      }
    } finally {
      store.close();
    }
  });

  test('a compile gets 503 storage_unavailable and is not charged; /health is 503', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    Object.assign(process.env, credentials);
    const t = await testApp({ env: { QUIRE_S3_BUCKET: 'quire-nowhere', AWS_ENDPOINT_URL_S3: endpoint } });
    try {
      const account = await createAccount(t.services, 'pro');
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error, 'storage_unavailable');
      assert.equal(res.json().retryable, true);
      assert.equal(res.headers['retry-after'], '5');
      const usage = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
      assert.equal(usage.usage.used_this_month, 0);
      const health = await t.app.inject({ url: '/health' });
      assert.equal(health.statusCode, 503);
      assert.equal(health.json().blob_store.ok, false);
      assert.deepEqual(health.json().database, { ok: true, dialect: 'sqlite' });
    } finally {
      await t.close();
    }
  });
});
