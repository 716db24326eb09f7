// The blob store in an S3-compatible bucket, for API nodes and workers that share no disk.
// Checksums are only computed when an operation requires them: with the SDK defaults,
// streamed uploads fail on S3-compatible stores (Ceph RGW, MinIO) that reject aws-chunked
// trailers. The bucket is created on first use when it does not exist.
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { checkBlobKey, pingByReadBack, type BlobStore } from './blobs.js';
import { storageFault } from './faults.js';

export interface S3Settings {
  bucket: string;
  /** A custom endpoint (Ceph, MinIO); when set, requests use path-style addressing. */
  endpoint: string | null;
  region: string;
}

const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return MISSING.has(e.name ?? '') || e.$metadata?.httpStatusCode === 404;
}

export class S3BlobStore implements BlobStore {
  private bucketReady: Promise<void> | null = null;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  /** Credentials come from the standard AWS variables unless given. */
  static create(settings: S3Settings, credentials?: { accessKeyId: string; secretAccessKey: string }): S3BlobStore {
    const client = new S3Client({
      region: settings.region,
      ...(credentials ? { credentials } : {}),
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      // Fail fast when the store is unreachable instead of holding the request.
      requestHandler: { connectionTimeout: 3000, requestTimeout: 60_000 },
    });
    return new S3BlobStore(client, settings.bucket);
  }

  /** Creates the bucket once when it is missing; a failed attempt is retried by the next call. */
  private ensureBucket(): Promise<void> {
    this.bucketReady ??= (async () => {
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      } catch (err) {
        if (!isMissing(err)) throw err;
        try {
          await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
        } catch (createErr) {
          // Another node created it first.
          if ((createErr as Error).name !== 'BucketAlreadyOwnedByYou') throw createErr;
        }
      }
    })().catch((err) => {
      this.bucketReady = null;
      throw err;
    });
    return this.bucketReady;
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      await this.ensureBucket();
      return await work();
    } catch (err) {
      throw storageFault(err) ?? err;
    }
  }

  async put(key: string, data: Buffer): Promise<void> {
    checkBlobKey(key);
    return this.call(async () => {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data, ContentLength: data.length }));
    });
  }

  async putStream(key: string, body: Readable, size: number): Promise<void> {
    checkBlobKey(key);
    return this.call(async () => {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: size }));
    });
  }

  async get(key: string): Promise<Buffer | null> {
    const body = await this.stream(key);
    if (!body) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async stream(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    checkBlobKey(key);
    return this.call(async () => {
      try {
        const out = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        );
        return out.Body as Readable;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    });
  }

  async size(key: string): Promise<number | null> {
    checkBlobKey(key);
    return this.call(async () => {
      try {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
        return head.ContentLength ?? 0;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    });
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    return this.call(async () => {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    });
  }

  ping(): Promise<void> {
    return pingByReadBack(this);
  }

  close(): void {
    this.client.destroy();
  }
}
