// Binary storage behind a small interface: local files by default, an S3-compatible bucket
// (s3-blobs.ts) on shared infrastructure. A blob is written whole or not at all: readers see
// the old bytes or the new, never a part, and a failed write leaves no temp file behind.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile, readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { storageFault } from './faults.js';

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  /** Stores `size` bytes read from `body` without holding them in memory. */
  putStream(key: string, body: Readable, size: number): Promise<void>;
  /** The bytes, or null when no blob has that key. */
  get(key: string): Promise<Buffer | null>;
  /** A stream of bytes `start..end` inclusive (whole blob when omitted), or null. */
  stream(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Throws when the store cannot be written and read back. */
  ping(): Promise<void>;
  /** Releases connections (object stores); nothing to do for local files. */
  close?(): void | Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** Keys are relative paths of plain names: no `..`, no leading slash, no empty segment. */
export function checkBlobKey(key: string): void {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid blob key: ${key}`);
}

export class LocalBlobStore implements BlobStore {
  private readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    checkBlobKey(key);
    const path = join(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid blob key: ${key}`);
    return path;
  }

  /** Writes beside the target and renames; on any failure the temp file goes and nothing is published. */
  private async atomically(key: string, write: (temp: string) => Promise<void>): Promise<void> {
    const path = this.path(key);
    const temp = `${path}.${randomUUID()}.tmp`;
    try {
      await mkdir(dirname(path), { recursive: true });
      await write(temp);
      await rename(temp, path);
    } catch (err) {
      await rm(temp, { force: true });
      throw storageFault(err) ?? err;
    }
  }

  put(key: string, data: Buffer): Promise<void> {
    return this.atomically(key, (temp) => writeFile(temp, data));
  }

  putStream(key: string, body: Readable, size: number): Promise<void> {
    return this.atomically(key, async (temp) => {
      await pipeline(body, createWriteStream(temp));
      const written = (await stat(temp)).size;
      if (written !== size) throw new Error(`blob ${key}: expected ${size} bytes, received ${written}`);
    });
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async stream(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const path = this.path(key);
    if ((await this.size(key)) === null) return null;
    return createReadStream(path, range);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  ping(): Promise<void> {
    return pingByReadBack(this);
  }
}

/** /health's check of any blob store: write, read back and delete a small object. */
export async function pingByReadBack(store: Pick<BlobStore, 'put' | 'get' | 'delete'>): Promise<void> {
  const key = `health/${randomUUID()}`;
  await store.put(key, Buffer.from('ok'));
  const back = await store.get(key);
  await store.delete(key);
  if (back?.toString() !== 'ok') throw new Error('blob store read-back mismatch');
}
