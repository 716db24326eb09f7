// Preview images: the first page of each template, rendered from its sample data in its
// default color, made on first request (never at start) and kept in the blob store (so every
// API node shares them when the store is S3). The key carries a hash of everything that
// shapes the page, so an edited template gets a new image and a new ETag by itself.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { errors } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import type { TexQueue } from '../queue/queue.js';
import type { GalleryTemplate } from './catalog.js';

const run = promisify(execFile);
/** Rendering settings; bump to regenerate every cached image. */
const RASTER = { version: 1, width: 900 };
const PREVIEW_TIMEOUT_MS = 60_000;
const PREVIEW_MAX_PDF_BYTES = 50 * 1024 * 1024;

export interface PreviewImage {
  png: Buffer;
  etag: string;
}

export type FillTemplate = (t: GalleryTemplate) => Promise<string>;

export class GalleryPreviews {
  private readonly pending = new Map<string, Promise<PreviewImage>>();
  private readonly memory = new Map<string, PreviewImage>();
  /** Previews are made one at a time: a cold index page must not fill the compile queue. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly blobs: BlobStore,
    private readonly texQueue: Pick<TexQueue, 'run'>,
    private readonly fill: FillTemplate,
  ) {}

  private key(t: GalleryTemplate): string {
    return createHash('sha256')
      .update(JSON.stringify([RASTER, t.compiler, t.latex_with_placeholders, t.sample_data, t.palette[t.default_color]]))
      .digest('hex')
      .slice(0, 20);
  }

  /** The PNG of `t`'s first page; concurrent first requests share one rendering. */
  async get(t: GalleryTemplate): Promise<PreviewImage> {
    const key = this.key(t);
    const cached = this.memory.get(key);
    if (cached) return cached;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.load(t, key).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  private async load(t: GalleryTemplate, key: string): Promise<PreviewImage> {
    const blobKey = `gallery-previews/${t.slug}-${key}.png`;
    const png = (await this.blobs.get(blobKey)) ?? (await this.serially(() => this.make(t, blobKey)));
    const image = { png, etag: `"${key}"` };
    this.memory.set(key, image);
    return image;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.chain.then(work);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async make(t: GalleryTemplate, blobKey: string): Promise<Buffer> {
    const latex = await this.fill(t);
    const result = await this.texQueue.run({
      source: latex,
      compiler: t.compiler,
      timeoutMs: PREVIEW_TIMEOUT_MS,
      maxFileBytes: PREVIEW_MAX_PDF_BYTES,
    });
    if (result.outcome !== 'ok' || !result.pdf) {
      throw errors.internal_error(`The preview of ${t.slug} could not be rendered (${result.outcome}).`);
    }
    const work = join(tmpdir(), `quire-preview-${randomUUID()}`);
    await mkdir(work, { recursive: true });
    try {
      await writeFile(join(work, 'doc.pdf'), result.pdf);
      await run('pdftoppm', ['-png', '-f', '1', '-l', '1', '-singlefile', '-scale-to-x', String(RASTER.width), '-scale-to-y', '-1', '-aa', 'yes', '-aaVector', 'yes', join(work, 'doc.pdf'), join(work, 'page')], { timeout: 30_000 });
      const png = await readFile(join(work, 'page.png'));
      await this.blobs.put(blobKey, png);
      return png;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}
