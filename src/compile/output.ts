// Checks a request's `output` object (schema: output-schema.ts) against the plan and turns it
// into the TeX job's output step (tex/output/spec.ts). Runs before the quota is reserved, so
// a refused option costs nothing and nothing is stored.
import { Value } from '@sinclair/typebox/value';
import { checkFileNameRules } from '../assets/validate.js';
import { BASE64_RULE, decodeCompact, readBase64 } from '../base64.js';
import { errors, validationFailed, type FieldError, type ServiceError } from '../errors.js';
import type { Compiler } from '../tex/compilers.js';
import type { TexResult } from '../tex/job.js';
import { limitsOf, type Tier } from '../quota/plans.js';
import { hasDocumentClass } from '../tex/output/source.js';
import type { OutputAttachment, OutputSpec } from '../tex/output/spec.js';
import { OutputBody, PASSWORD_MAX_BYTES, type OutputRequest } from './output-schema.js';
import { parseStandards } from './standards.js';

/** What the compile's assets already use of the plan's per-document asset limits. */
export interface AssetUse {
  count: number;
  bytes: number;
}


/** Throws validation_failed, with each field's path, unless `raw` is absent or fits the declared schema. */
export function checkOutputShape(raw: unknown): asserts raw is OutputRequest | undefined | null {
  if (raw === undefined || raw === null || Value.Check(OutputBody, raw)) return;
  const fields: FieldError[] = [...Value.Errors(OutputBody, raw)].slice(0, 10).map((e) => ({
    field: `output${e.path.replaceAll('/', '.')}`,
    rule: 'schema',
    message: e.message.toLowerCase(),
  }));
  throw validationFailed(fields);
}

/** The batch's `output` with an item's own fields over it (an item's field replaces the batch's). */
export function mergeOutput(batch: unknown, item: unknown): unknown {
  if (item === undefined || item === null) return batch;
  if (batch === undefined || batch === null) return item;
  return { ...(batch as object), ...(item as object) };
}

/**
 * `files`: the compile's resolved asset files, where output.watermark.asset is looked up.
 */
export function parseOutput(
  raw: unknown,
  tier: Tier,
  latex: string,
  assets: AssetUse,
  upgradeUrl: string,
  files: ReadonlyArray<{ name: string; data: Buffer }> = [],
  compiler: Compiler = 'pdflatex',
): OutputSpec | undefined {
  checkOutputShape(raw);
  if (raw === undefined || raw === null) return undefined;
  const request = raw;
  const fields: FieldError[] = [];
  const field = (name: string, rule: string, message: string) => fields.push({ field: name, rule, message });
  // PDF/A, PDF/UA and tagging (issue 40, standards.ts); `pdfx`: PDF/A written by pdfx (no tagging).
  const standards = parseStandards(request, compiler, latex, field);
  const pdfx = standards.pdfStandard !== undefined && !standards.tagging;
  if (request.encrypt && request.pdf_standard) field('output.encrypt', 'conflict', 'cannot be combined with output.pdf_standard (PDF/A forbids encryption; a PDF/UA report is made on the PDF before encryption)');
  if (request.encrypt && request.pdf_standard) field('output.pdf_standard', 'conflict', 'cannot be combined with output.encrypt (PDF/A forbids encryption)');
  if (request.watermark && request.pdf_standard) field('output.watermark', 'conflict', 'a watermark is not checked for PDF/A (a text one uses a font that is not embedded): not with output.pdf_standard');
  const stampFile = request.watermark?.asset !== undefined ? files.find((file) => file.name === request.watermark!.asset) : undefined;
  if (request.watermark && (request.watermark.text === undefined) === (request.watermark.asset === undefined)) {
    field('output.watermark', 'one_of', 'must have exactly one of text and asset');
  } else if (request.watermark?.asset !== undefined && !stampFile) {
    field('output.watermark.asset', 'asset', 'must name a PDF sent with this compile in assets or use_stored_assets');
  } else if (stampFile && !stampFile.data.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
    field('output.watermark.asset', 'format', 'must name a PDF file');
  }
  if (request.attachments && Object.keys(request.attachments).length > 0 && standards.pdfStandard && !/^a-(3|4f)/.test(standards.pdfStandard)) {
    field('output.attachments', 'conflict', 'PDF/A allows embedded files only at level 3 (a-3b, a-3u) and in a-4f');
  }
  for (const key of ['user_password', 'owner_password'] as const) {
    const password = request.encrypt?.[key];
    if (password !== undefined && Buffer.byteLength(password) > PASSWORD_MAX_BYTES) field(`output.encrypt.${key}`, 'maxBytes', `must be at most ${PASSWORD_MAX_BYTES} bytes`);
    // Any other character is data: qpdf reads the passwords as JSON strings (tex/output/steps.ts).
    if (password !== undefined && /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(password)) field(`output.encrypt.${key}`, 'characters', 'must not contain null bytes or unpaired surrogates');
  }
  if (request.watermark?.text !== undefined && !/^[\x20-\x7e\xa0-\xff]+$/.test(request.watermark.text)) field('output.watermark.text', 'characters', 'must be printable Latin-1 text');
  for (const [name, spec] of Object.entries(request.attachments ?? {})) {
    if (spec.description !== undefined && !wellFormed(spec.description)) field(`output.attachments.${name}.description`, 'unicode', 'must be well-formed Unicode (no lone surrogate)');
  }
  const meta = request.metadata ?? {};
  for (const [key, value] of Object.entries(meta)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && /[\0-\x1f\x7f]/.test(v))) field(`output.metadata.${key}`, 'characters', 'must not contain control characters');
    // A lone UTF-16 surrogate (JSON's \ud800) is no character: qpdf's JSON, the XMP and the Info dictionary cannot hold it.
    if (values.some((v) => typeof v === 'string' && !wellFormed(v))) field(`output.metadata.${key}`, 'unicode', 'must be well-formed Unicode (no lone surrogate)');
    // pdfx 1.6 writes "&" differently into Info and XMP, which PDF/A forbids.
    if (pdfx && values.some((v) => typeof v === 'string' && v.includes('&'))) field(`output.metadata.${key}`, 'characters', 'must not contain "&" with output.pdf_standard');
  }
  // embedfile stops XeTeX with "Missing pdfTeX or luaTeX in PDF mode": refused here, never a TeX error.
  if (request.attachments && Object.keys(request.attachments).length > 0 && compiler === 'xelatex') {
    field('output.attachments', 'compiler', 'embedded files need pdflatex or lualatex (embedfile does not support XeTeX)');
  }
  if ((request.pdf_standard || request.tagged || request.attachments) && !hasDocumentClass(latex)) {
    field(request.pdf_standard ? 'output.pdf_standard' : request.tagged ? 'output.tagged' : 'output.attachments', 'documentclass', 'needs the \\documentclass line in latex itself');
  }
  const images = request.page_images;
  const budget = limitsOf(tier).pageImageBudget;
  const dpi = images?.dpi ?? 72;
  const pages = images ? (images.pages === 'all' ? Math.min(100, Math.floor(budget / dpi)) : images.pages.length) : 0;
  if (images && images.pages !== 'all' && pages * dpi > budget) {
    field('output.page_images', 'budget', `${pages} pages at ${dpi} dpi is over the ${tier} plan's ${budget} (pages × dpi)`);
  }
  if (images && pages < 1) field('output.page_images.dpi', 'budget', `the ${tier} plan's budget (${budget} pages × dpi) allows no page at ${dpi} dpi`);
  if (fields.length > 0) throw validationFailed(fields);

  const attachments = checkAttachments(request.attachments ?? {}, tier, assets, upgradeUrl);
  const mark = request.watermark;
  const spec: OutputSpec = {
    ...standards,
    ...(request.metadata ? { metadata: request.metadata } : {}),
    ...(request.encrypt
      ? {
          encrypt: {
            userPassword: request.encrypt.user_password ?? '',
            ownerPassword: request.encrypt.owner_password,
            permissions: {
              print: request.encrypt.permissions?.print ?? true,
              modify: request.encrypt.permissions?.modify ?? true,
              copy: request.encrypt.permissions?.copy ?? true,
              annotate: request.encrypt.permissions?.annotate ?? true,
              fillForms: request.encrypt.permissions?.fill_forms ?? true,
              accessibility: request.encrypt.permissions?.accessibility ?? true,
            },
          },
        }
      : {}),
    ...(mark && stampFile ? { stamp: { pdf: stampFile.data, underlay: mark.underlay ?? false, ...(mark.pages ? { pages: mark.pages } : {}) } } : {}),
    ...(mark?.text !== undefined
      ? {
          watermark: {
            text: mark.text,
            opacity: mark.opacity ?? 0.2,
            angle: mark.angle ?? 45,
            color: hexColor(mark.color ?? '#808080'),
            ...(mark.pages ? { pages: mark.pages } : {}),
          },
        }
      : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(images ? { pageImages: { pages: images.pages, dpi, maxPages: pages } } : {}),
    ...(request.linearize ? { linearize: true } : {}),
    ...(request.compress ? { compress: true } : {}),
  };
  // Nothing for the sandboxed step (an `output` with only `sign`, which runs in the host): no step, the plain job's cache key.
  return Object.keys(spec).length > 0 ? spec : undefined;
}

/** No lone UTF-16 surrogate: every code unit of a pair has its partner (String.isWellFormed, ES2024). */
function wellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function hexColor(hex: string): [number, number, number] {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number];
}

/** Decoded attachments, their names under the asset name rule, counted with the compile's assets. */
function checkAttachments(raw: NonNullable<OutputRequest['attachments']>, tier: Tier, assets: AssetUse, upgradeUrl: string): OutputAttachment[] {
  const limits = limitsOf(tier);
  const entries = Object.entries(raw);
  if (entries.length === 0) return [];
  const count = assets.count + entries.length;
  if (count > limits.maxAssetsPerDocument) {
    throw errors.too_many_assets(`This compile names ${assets.count} assets and ${entries.length} attachments; the ${tier} plan allows ${limits.maxAssetsPerDocument} per document.`, {
      limit: limits.maxAssetsPerDocument,
      count,
      plan: tier,
      upgrade_url: upgradeUrl,
    });
  }
  const attachments: OutputAttachment[] = [];
  let total = assets.bytes;
  for (const [name, spec] of entries) {
    checkFileNameRules(name, (why) => errors.invalid_asset_filename(`Attachment "${name}": ${why}`, { asset: name }));
    const reading = readBase64(spec.content_base64);
    const data = reading.ok ? decodeCompact(reading.compact) : undefined;
    if (!data) throw errors.invalid_asset_encoding(`Attachment "${name}" is ${BASE64_RULE}.`, { asset: name });
    total += data.length;
    attachments.push({
      name,
      data,
      relationship: (spec.relationship ?? 'Data') as OutputAttachment['relationship'],
      mimeType: spec.mime_type ?? 'application/octet-stream',
      ...(spec.description ? { description: spec.description } : {}),
    });
  }
  if (total > limits.maxAssetsBytesPerDocument) {
    throw errors.assets_too_large(`The assets and attachments of this compile decode to ${total} bytes; the ${tier} plan allows ${limits.maxAssetsBytesPerDocument} bytes per document.`, {
      limit: limits.maxAssetsBytesPerDocument,
      total_bytes: total,
      plan: tier,
      upgrade_url: upgradeUrl,
    });
  }
  return attachments;
}

/** The 422 of a PDF the output step refused: the validator's or the tool's reasons, the (capped) log kept. */
export function outputFailure(result: TexResult, tier: Tier, output: OutputSpec | undefined, log: string): ServiceError {
  const reasons = result.reasons ?? [];
  const common = { log, reasons, retryable: false, plan: tier };
  if (result.outcome === 'output_failed') return errors.output_failed(`The output step could not process the PDF: ${reasons.join('; ')}`, common);
  const standard = output?.pdfStandard ?? '';
  return errors.pdf_standard_failed(`The PDF does not meet PDF/A-${standard.slice(2).toUpperCase()}: ${reasons.slice(0, 3).join('; ')}`, {
    ...common,
    pdf_standard: standard,
    agent_hint: 'Embed every font (no Type 3 or base-14 fonts), avoid transparency for a-1b, and do not load packages that write their own XMP; then compile again.',
  });
}
