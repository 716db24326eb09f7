// The blob store contract on local files and on a real S3 server (Ceph RGW, started by
// scripts/ceph-rgw.sh), plus what only S3 has: bucket creation and SigV4 verification.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config.js';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import { S3BlobStore } from '../../src/storage/s3-blobs.js';
import { ensureRgw, freshBucket, type S3Env } from '../s3.js';
import { blobContract } from './blob-contract.js';

describe('LocalBlobStore', () => {
  let dir: string;
  let store: LocalBlobStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-blobs-'));
    store = new LocalBlobStore(dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  blobContract(() => store);

  test('no temp file is left after writes', async () => {
    const all = await readdir(dir, { recursive: true });
    assert.deepEqual(all.filter((name) => name.endsWith('.tmp')), []);
  });
});

describe('S3BlobStore on Ceph RGW', () => {
  let env: S3Env;
  let bucket: string;
  let store: S3BlobStore;
  before(async () => {
    env = await ensureRgw();
    bucket = freshBucket();
    store = S3BlobStore.create({ bucket, endpoint: env.AWS_ENDPOINT_URL_S3, region: env.AWS_REGION });
    Object.assign(process.env, env);
  });
  after(() => store.close());

  blobContract(() => store);

  test('the bucket was created on first use', async () => {
    const client = new S3Client({ region: env.AWS_REGION, endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
    const head = await client.send(new HeadBucketCommand({ Bucket: bucket }));
    assert.equal(head.$metadata.httpStatusCode, 200);
    client.destroy();
  });

  test('a request signed with the wrong secret is refused (SigV4 is verified)', async () => {
    const wrong = S3BlobStore.create(
      { bucket, endpoint: env.AWS_ENDPOINT_URL_S3, region: env.AWS_REGION },
      { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: 'not-the-secret-0000000000000000' },
    );
    try {
      const refused = (err: { $metadata?: { httpStatusCode?: number } }) => err.$metadata?.httpStatusCode === 403;
      await assert.rejects(wrong.get('pdfs/a.pdf'), refused);
      await assert.rejects(wrong.put('pdfs/b.pdf', Buffer.from('x')), refused);
    } finally {
      wrong.close();
    }
  });

  test('QUIRE_S3_BUCKET selects it, with the endpoint from AWS_ENDPOINT_URL_S3 (else AWS_ENDPOINT_URL)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'quire-cfg-'));
    try {
      const base = { QUIRE_DATA_DIR: dataDir, QUIRE_SECRET: 'test-secret-0123456789abcdef' };
      assert.equal(loadConfig(base).s3, null);
      assert.deepEqual(loadConfig({ ...base, QUIRE_S3_BUCKET: 'quire-pdfs', AWS_ENDPOINT_URL: 'http://a:1', AWS_ENDPOINT_URL_S3: 'http://b:2', AWS_REGION: 'eu-west-3' }).s3, {
        bucket: 'quire-pdfs',
        endpoint: 'http://b:2',
        region: 'eu-west-3',
      });
      assert.equal(loadConfig({ ...base, QUIRE_S3_BUCKET: 'quire-pdfs', AWS_ENDPOINT_URL: 'http://a:1' }).s3?.endpoint, 'http://a:1');
      assert.throws(() => loadConfig({ ...base, QUIRE_S3_BUCKET: 'Bad_Bucket' }), /QUIRE_S3_BUCKET/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
