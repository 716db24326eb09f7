// Batch render (POST /api/v2/templates/{id}/render_batch, always an async job): each item of a
// V2 template is rendered on its own (own validation, own charge, own failure), one after
// another so a batch does not take every TeX slot; with `merge` the successful PDFs are joined
// into one more signed PDF, by qpdf on the TeX queue (a worker in BullMQ mode).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AccountCaller, Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import { signedPdfUrl } from '../compile/links.js';
import type { PdfStore } from '../compile/pdfs.js';
import type { Config } from '../config.js';
import { checkOutputShape, mergeOutput } from '../compile/output.js';
import { parseOnError } from '../compile/rules.js';
import { INTERNAL_ERROR_BODY, invalidField, isServiceError } from '../errors.js';
import type { Accepted, JobService } from '../jobs/service.js';
import { limitsOf } from '../quota/plans.js';
import type { TexQueue } from '../queue/queue.js';
import type { BlobStore } from '../storage/blobs.js';
import type { TemplateService } from './service.js';

export const BATCH_MAX_ITEMS = 50;

export type BatchItem = { index: number; status: number; result: Record<string, unknown> } | { index: number; status: number; error: Record<string, unknown> };

export interface BatchRequest {
  /** The data of each render. */
  items: unknown[];
  merge?: boolean;
  callbackUrl?: unknown;
  /** The `output` of every render (compile/output-schema.ts). */
  output?: unknown;
  /** Per item, by position: its own `output` fields, over the batch's ({}: the batch's). */
  outputs?: unknown[];
  /** The TeX Live year of every item: else the template's stored one, else the default. */
  texlive?: unknown;
  /** The `on_error` of every item (compile/rules.ts parseOnError). */
  onError?: unknown;
}

export interface BatchDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  pdfs: PdfStore;
  blobs: BlobStore;
  templates: Pick<TemplateService, 'getV2' | 'render' | 'texliveYear'>;
  asyncJobs: Pick<JobService, 'startQueued'>;
  texQueue: Pick<TexQueue, 'merge'>;
}

export class BatchService {
  constructor(private readonly deps: BatchDeps) {}

  /**
   * Refuses what concerns the whole batch now (unknown or raw V1 template, a TeX Live year not
   * served, a bad `on_error`), then accepts the job. The year is fixed here, so every item runs with the same one.
   */
  async start(caller: AccountCaller, templateId: string, request: BatchRequest): Promise<Accepted> {
    const { templates, asyncJobs } = this.deps;
    const outputs = request.outputs ?? [];
    if (outputs.length > request.items.length) {
      throw invalidField('outputs', 'maxItems', `must have at most as many entries as items (${request.items.length})`);
    }
    // Malformed output objects refuse the whole batch now; what depends on the plan fails its item alone.
    checkOutputShape(request.output);
    for (const output of outputs) checkOutputShape(output);
    const onError = parseOnError(request.onError);
    const template = await templates.getV2(caller, templateId);
    const id = String(template.template.id);
    const requested = request.texlive ?? template.template.texlive ?? undefined;
    const texlive = templates.texliveYear(requested);
    // A year named by the request or the template goes to each render; none: each takes the default, which is `texlive`.
    const year = requested === undefined ? {} : { texlive };
    return asyncJobs.startQueued(caller, { kind: 'render_batch', callbackUrl: request.callbackUrl }, async () => ({
      template_id: template.template.id,
      texlive,
      ...(await this.run(caller, request.items, request.merge === true, (data, index) =>
        templates.render(caller, id, data, { background: true }, { output: mergeOutput(request.output, outputs[index]), ...year, onError }),
      )),
    }));
  }

  private async run(caller: Caller, items: unknown[], merge: boolean, render: (data: unknown, index: number) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const results: BatchItem[] = [];
    for (const [index, data] of items.entries()) {
      try {
        results.push({ index, status: 200, result: await render(data, index) });
      } catch (err) {
        if (!isServiceError(err)) this.deps.log.error({ err, index }, 'batch item failed unexpectedly');
        results.push(isServiceError(err) ? { index, status: err.status, error: err.body() } : { index, status: 500, error: { ...INTERNAL_ERROR_BODY } });
      }
    }
    const succeeded = results.filter((r) => 'result' in r).length;
    const body: Record<string, unknown> = { items: results, succeeded, failed: results.length - succeeded };
    if (merge) {
      try {
        body.merged = await this.merge(caller, results);
      } catch (err) {
        this.deps.log.error({ err }, 'batch merge failed');
        body.merged = null;
        body.merge_error = { error: 'internal_error', message: "The PDFs could not be merged; each item's own PDF is in items." };
      }
    }
    return body;
  }

  private async merge(caller: Caller, results: BatchItem[]): Promise<Record<string, unknown> | null> {
    const { deps } = this;
    const ids = results.flatMap((r) => ('result' in r && typeof r.result.job_id === 'string' ? [r.result.job_id] : []));
    if (ids.length === 0) return null;
    const pdfs: Buffer[] = [];
    for (const id of ids) {
      const data = await deps.blobs.get(`pdfs/${id}.pdf`);
      if (!data) throw new Error(`batch PDF ${id} is gone`);
      pdfs.push(data);
    }
    const tier = caller.kind === 'account' ? caller.account.plan : 'anonymous';
    const limits = limitsOf(tier);
    const merged = await deps.texQueue.merge({ pdfs, maxBytes: limits.maxPdfBytes * ids.length + 1024 * 1024 });
    const id = randomUUID();
    const expiresAt = new Date(deps.clock.now().getTime() + limits.pdfLinkSeconds * 1000);
    await deps.pdfs.save({ id, accountId: caller.kind === 'account' ? caller.account.id : null, data: merged.pdf, pages: merged.pages, expiresAt });
    return {
      job_id: id,
      pdf_url: signedPdfUrl(deps.config.baseUrl, deps.config.secret, id, expiresAt),
      expires_at: expiresAt.toISOString(),
      pages: merged.pages,
      items_merged: ids.length,
    };
  }
}
