// Binary storage behind a small interface: local files by default, an object store
// (S3-compatible) on shared infrastructure.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when no blob has that key. */
  get(key: string): Promise<Buffer | null>;
  /** A stream of bytes `start..end` inclusive (whole blob when omitted), or null. */
  stream(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Throws when the store cannot be written and read back. */
  ping(): Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export class LocalBlobStore implements BlobStore {
  private readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid blob key: ${key}`);
    const path = join(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid blob key: ${key}`);
    return path;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    // Write beside the target and rename: readers see the old blob or the new, never half.
    const temp = `${path}.${randomUUID()}.tmp`;
    await writeFile(temp, data);
    await rename(temp, path);
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

  async ping(): Promise<void> {
    const key = `health/${randomUUID()}`;
    await this.put(key, Buffer.from('ok'));
    const back = await this.get(key);
    await this.delete(key);
    if (back?.toString() !== 'ok') throw new Error('blob store read-back mismatch');
  }
}
