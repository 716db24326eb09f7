// Signed PDF links and gallery previews with the blobs in a real S3 bucket (Ceph RGW): the
// public contract does not change — 403 before 410 before 404, Range and HEAD — and the
// bytes are streamed from the bucket, not from the node's disk.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ManualClock } from '../../src/clock.js';
import { signedPdfUrl } from '../../src/compile/links.js';
import { blobKey } from '../../src/assets/library.js';
import { S3BlobStore } from '../../src/storage/s3-blobs.js';
import { createAccount, HELLO, testApp, type TestApp } from '../helpers.js';
import { ensureRgw, freshBucket, type S3Env } from '../s3.js';

const path = (url: string) => new URL(url).pathname + new URL(url).search;

describe('signed links with PDFs in S3', () => {
  let t: TestApp;
  let env: S3Env;
  let bucket: string;
  let client: S3Client;
  const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
  before(async () => {
    env = await ensureRgw();
    // The SDK reads credentials from the standard variables, as in production.
    Object.assign(process.env, env);
    bucket = freshBucket();
    t = await testApp({ clock, env: { QUIRE_S3_BUCKET: bucket, ...env } });
    client = new S3Client({ region: env.AWS_REGION, endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
  });
  after(async () => {
    client.destroy();
    await t.close();
  });

  test('the PDF is in the bucket and its link serves it whole, by range and by HEAD', async () => {
    assert.ok(t.services.blobs instanceof S3BlobStore);
    const account = await createAccount(t.services, 'pro');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: account.headers });
    assert.equal(res.statusCode, 200, res.body);
    const url = res.json().pdf_url as string;
    const id = new URL(url).pathname.split('/').pop()!;

    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `pdfs/${id}.pdf` }));
    const stored = Buffer.from(await object.Body!.transformToByteArray());
    assert.equal(stored.subarray(0, 5).toString(), '%PDF-');
    assert.deepEqual(await readdir(join(t.services.dataDir))
      .then((names) => names.filter((n) => n === 'blobs')), [], 'nothing is written to the local blob dir');

    const whole = await t.app.inject({ method: 'GET', url: path(url) });
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-type'], 'application/pdf');
    assert.equal(whole.headers['content-length'], String(stored.length));
    assert.deepEqual(whole.rawPayload, stored);

    const part = await t.app.inject({ method: 'GET', url: path(url), headers: { range: 'bytes=100-199' } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${stored.length}`);
    assert.deepEqual(part.rawPayload, stored.subarray(100, 200));

    const tail = await t.app.inject({ method: 'GET', url: path(url), headers: { range: 'bytes=-7' } });
    assert.equal(tail.statusCode, 206);
    assert.deepEqual(tail.rawPayload, stored.subarray(-7));

    const beyond = await t.app.inject({ method: 'GET', url: path(url), headers: { range: `bytes=${stored.length}-` } });
    assert.equal(beyond.statusCode, 416);

    const head = await t.app.inject({ method: 'HEAD', url: path(url) });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(stored.length));
    assert.equal(head.rawPayload.length, 0);

    // 403 before 410 before 404.
    const exp = new URL(url).searchParams.get('exp')!;
    const tampered = await t.app.inject({ method: 'GET', url: `/api/v1/pdfs/${id}?exp=${exp}&sig=AAAA` });
    assert.equal(tampered.statusCode, 403);
    assert.equal(tampered.json().error, 'invalid_signature');
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const unknown = await t.app.inject({
      method: 'GET',
      url: path(signedPdfUrl('http://quire.test', t.services.config.secret, unknownId, new Date(clock.now().getTime() + 60_000))),
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'not_found');

    clock.advance(25 * 3600_000);
    const expired = await t.app.inject({ method: 'GET', url: path(url) });
    assert.equal(expired.statusCode, 410);
    assert.equal(expired.json().error, 'link_expired');
    const expiredUnknown = await t.app.inject({
      method: 'GET',
      url: path(signedPdfUrl('http://quire.test', t.services.config.secret, unknownId, new Date(clock.now().getTime() - 1000))),
    });
    assert.equal(expiredUnknown.statusCode, 410, 'an expired link says expired even when the PDF is gone');

    assert.ok((await t.services.pdfs.sweep()) >= 1);
    await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: `pdfs/${id}.pdf` })), { name: 'NoSuchKey' });
  });

  test('a gallery preview is rendered once and kept in the bucket', async () => {
    const slug = t.services.gallery.templates[0]!.slug;
    const res = await t.app.inject({ url: `/api/v1/public_templates/${slug}/preview.png` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'image/png');
    const etag = (res.headers.etag as string).replaceAll('"', '');
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `gallery-previews/${slug}-${etag}.png` }));
    assert.deepEqual(Buffer.from(await object.Body!.transformToByteArray()), res.rawPayload);
  });

  test('a stored asset lives in the bucket and a compile uses it from there', async () => {
    const png = readFileSync(new URL('../fixtures/assets/logo.png', import.meta.url));
    const account = await createAccount(t.services, 'pro');
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: account.headers,
      payload: { name: 'logo.png', content_base64: png.toString('base64') },
    });
    assert.equal(up.statusCode, 201, up.body);
    const key = blobKey(createHash('sha256').update(png).digest('hex'));
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    assert.deepEqual(Buffer.from(await object.Body!.transformToByteArray()), png);

    const latex = '\\documentclass{article}\\usepackage{graphicx}\\begin{document}\\includegraphics[width=2cm]{logo.png}\\end{document}';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/compile',
      headers: account.headers,
      payload: { latex, use_stored_assets: ['logo.png'] },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().stored_assets_used, ['logo.png']);
  });
});
