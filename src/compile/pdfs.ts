// Compiled PDFs: a row in `pdfs` and a blob `pdfs/<id>.pdf`, both gone after the link expires.
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Database, PdfRow } from '../storage/schema.js';

const JANITOR_MS = 60_000;
const blobKey = (id: string) => `pdfs/${id}.pdf`;
const imageKey = (id: string, page: number) => `pdfs/${id}-page-${page}.png`;
/** The pages whose images a PDF has (absent: none), so the sweep deletes exactly those. */
const imageListKey = (id: string) => `pdfs/${id}-pages.json`;

export class PdfStore {
  private janitor: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly blobs: BlobStore,
    private readonly clock: Clock,
  ) {}

  async save(pdf: { id: string; accountId: number | null; data: Buffer; pages: number; expiresAt: Date }): Promise<void> {
    await this.blobs.put(blobKey(pdf.id), pdf.data);
    await this.db
      .insertInto('pdfs')
      .values({
        id: pdf.id,
        account_id: pdf.accountId,
        size_bytes: pdf.data.length,
        pages: pdf.pages,
        created_at: this.clock.now().toISOString(),
        expires_at: pdf.expiresAt.toISOString(),
      })
      .execute();
  }

  /** Page images of a saved PDF (issue 23), kept and swept with it. */
  async saveImages(id: string, images: ReadonlyArray<{ page: number; png: Buffer }>): Promise<void> {
    if (images.length === 0) return;
    await this.blobs.put(imageListKey(id), Buffer.from(JSON.stringify(images.map((image) => image.page))));
    for (const image of images) await this.blobs.put(imageKey(id, image.page), image.png);
  }

  image(id: string, page: number): Promise<Buffer | null> {
    return this.blobs.get(imageKey(id, page));
  }

  async find(id: string): Promise<PdfRow | undefined> {
    return this.db.selectFrom('pdfs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  stream(id: string, range?: { start: number; end: number }): Promise<Readable | null> {
    return this.blobs.stream(blobKey(id), range);
  }

  /** The whole PDF (the compile answer that carries it, src/http/inline-pdf.ts); null when gone. */
  bytes(id: string): Promise<Buffer | null> {
    return this.blobs.get(blobKey(id));
  }

  /** Whether the PDF's bytes are stored (a HEAD needs no more). */
  async exists(id: string): Promise<boolean> {
    return (await this.blobs.size(blobKey(id))) !== null;
  }

  /** Deletes every PDF whose link has expired. */
  async sweep(): Promise<number> {
    const now = this.clock.now().toISOString();
    const expired = await this.db.selectFrom('pdfs').select('id').where('expires_at', '<=', now).execute();
    for (const { id } of expired) {
      const pages = await this.blobs.get(imageListKey(id));
      for (const page of pages ? (JSON.parse(pages.toString('utf8')) as number[]) : []) await this.blobs.delete(imageKey(id, page));
      if (pages) await this.blobs.delete(imageListKey(id));
      await this.blobs.delete(blobKey(id));
      await this.db.deleteFrom('pdfs').where('id', '=', id).execute();
    }
    return expired.length;
  }

  /** Sweeps expired PDFs every minute, plus any `also` housekeeping (expired counters). */
  startJanitor(onError: (err: unknown) => void, ...also: Array<() => Promise<unknown>>): void {
    if (this.janitor) return;
    this.janitor = setInterval(() => {
      for (const task of [() => this.sweep(), ...also]) void task().catch(onError);
    }, JANITOR_MS);
    this.janitor.unref();
  }

  stopJanitor(): void {
    if (this.janitor) clearInterval(this.janitor);
    this.janitor = null;
  }
}
