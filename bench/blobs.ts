// Blob store latency: put, get and a ranged stream of a 20 KB blob (a typical one-page PDF),
// on local files and on an S3 endpoint. Usage (S3 needs the env of scripts/ceph-rgw.sh):
//   eval "$(scripts/ceph-rgw.sh start)" && node --import tsx bench/blobs.ts
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { LocalBlobStore, type BlobStore } from '../src/storage/blobs.js';
import { S3BlobStore } from '../src/storage/s3-blobs.js';

const ROUNDS = 200;
const data = randomBytes(20 * 1024);

async function drain(stream: Readable | null): Promise<void> {
  for await (const _ of stream ?? []) void _;
}

async function time(work: (i: number) => Promise<unknown>): Promise<string> {
  const ms: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await work(i);
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.floor(q * (ms.length - 1))]!.toFixed(2);
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`;
}

async function bench(name: string, store: BlobStore): Promise<void> {
  await store.ping();
  const put = await time((i) => store.put(`bench/${i}`, data));
  const get = await time((i) => store.get(`bench/${i}`));
  const range = await time(async (i) => drain(await store.stream(`bench/${i}`, { start: 100, end: 4195 })));
  for (let i = 0; i < ROUNDS; i++) await store.delete(`bench/${i}`);
  console.log(`${name.padEnd(6)} put ${put} | get ${get} | range ${range}`);
}

const dir = await mkdtemp(join(tmpdir(), 'quire-bench-'));
await bench('local', new LocalBlobStore(dir));
await rm(dir, { recursive: true, force: true });
const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
if (endpoint) {
  const s3 = S3BlobStore.create({ bucket: `quire-bench-${randomBytes(4).toString('hex')}`, endpoint, region: process.env.AWS_REGION ?? 'us-east-1' });
  await bench('s3', s3);
  s3.close();
} else {
  console.log('s3     skipped: no AWS_ENDPOINT_URL_S3 (run scripts/ceph-rgw.sh start)');
}
