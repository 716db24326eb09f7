// The output step of a TeX job (issue 23), run by the runner in the job's own sandbox and
// within its deadline, after the active-content scan passed: the PDF/A check, metadata,
// watermark, page images, then one qpdf write for compression, linearization and
// encryption (encryption last, so nothing after it needs the password). Every command is
// qpdf, pdftoppm, pdfinfo, pdffonts or java on a file of the workspace (or a warm validator
// given the PDF's bytes, see warm-validator.ts); what the host writes
// into the workspace is created exclusively (a link or file the job left there fails the
// step, never followed). What the caller brings in (a stamp, attached PDFs) is scanned for
// active content as delivered (issue 37, see scanDelivered).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Exec } from '../sandbox/session.js';
import { inspectPdf, type PdfaFacts } from '../pdf/pdfread.js';
import type { Workspace } from '../sandbox/workspace.js';
import type { ConformanceReport } from './conformance.js';
import { jobConformance } from './conformance-read.js';
import { checkStandard } from './pdfa-check.js';
import type { OutputSpec, PageImage } from './spec.js';
import type { WarmValidators } from './warm-validator.js';
import { watermarkPdf } from './watermark.js';
import { infoEntries, xmpPacket } from './xmp.js';

export interface StepContext {
  exec: (argv: string[], fileBytes?: number) => Promise<Exec>;
  workspace: Workspace;
  /** The workspace on the host, for the files the step hands to its commands. */
  dir: string;
  maxFileBytes: number;
  /** Pages of the PDF. */
  pages: number;
  /** The PDF/A structural facts of TeX's PDF, when the in-process reader read them. */
  facts?: PdfaFacts;
  /** The process's warm PDF/A-1b validators (warm-validator.ts); none: Preflight runs cold. */
  validators?: WarmValidators | undefined;
  /** The job's deadline (performance.now() time) and stop signal, for what runs outside `exec`. */
  deadline?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Whose job it is: a warm validator serves one scope only (warm-validator.ts). */
  scope?: string | undefined;
  /** The active-content scan in the sandbox (qpdf's JSON, pdfcheck.ts) of a workspace file the in-process reader declined. */
  inspect: (file: string) => Promise<{ active: string[] } | { unmeasurable: string }>;
}

export type StepResult =
  | { ok: true; pdf: Buffer; images: PageImage[]; conformance?: ConformanceReport }
  /**
   * `standard`: the PDF does not meet the standard asked for; `failed`: a tool refused the PDF;
   * `active`: what the step brought in carries active content (the findings, pdfcheck.ts).
   */
  | { ok: false; kind: 'standard' | 'failed' | 'active'; reasons: string[] };

class PutRefused extends Error {}

/** qpdf exits 3 when it wrote a usable file with warnings. */
const qpdfOk = (run: Exec) => run.code === 0 || run.code === 3;
const JSON_CAP = 16 * 1024 * 1024;

export async function runOutputStep(ctx: StepContext, output: OutputSpec, main: string): Promise<StepResult> {
  try {
    return await steps(ctx, output, main);
  } catch (err) {
    if (err instanceof PutRefused) return { ok: false, kind: 'failed', reasons: [err.message] };
    throw err;
  }
}

async function steps(ctx: StepContext, output: OutputSpec, main: string): Promise<StepResult> {
  let current = main;
  let serial = 0;
  const next = () => `.quire-out-${++serial}.pdf`;
  // The job's TeX ran before: a name it left behind is the job's doing (a 422), never a 500.
  const put = (name: string, data: string | Buffer) =>
    writeFile(join(ctx.dir, name), data, { flag: 'wx', mode: 0o644 }).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EEXIST' ? new PutRefused(`the job left a file named ${name}, which the output step writes`) : err;
    });
  const failed = (tool: string, run: Exec): StepResult => ({ ok: false, kind: 'failed', reasons: [`${tool}: ${run.output.trim().slice(0, 500)}`] });

  const attached = await scanAttachments(ctx, output, put);
  if (attached) return attached;
  let facts: Awaited<ReturnType<typeof checkStandard>>['facts'];
  if (output.pdfStandard) {
    const reasons = await checkStandard(ctx, output.pdfStandard, current);
    if (reasons.length > 0) return { ok: false, kind: 'standard', reasons };
    facts = reasons.facts;
  }
  // The report on TeX's PDF (issue 40): what follows adds no structure (a watermark is refused with UA).
  const conformance = output.pdfStandard || output.tagging ? await jobConformance(ctx, output, current, facts) : undefined;
  // With tagging the kernel wrote the metadata (and the XMP claims a post-pass would drop).
  if (output.metadata && !output.pdfStandard && !output.tagging) {
    const updated = await writeMetadata(ctx, output, current, next(), put);
    if (!updated.ok) return failed('qpdf (metadata)', updated.run);
    current = updated.name;
  }
  // A text watermark, or the caller's own PDF (its first page), over or under the asked pages.
  const mark = output.watermark ? { pdf: watermarkPdf(output.watermark), underlay: false, pages: output.watermark.pages } : output.stamp;
  if (mark) {
    await put('.quire-stamp.pdf', mark.pdf);
    const out = next();
    const to = mark.pages ? [`--to=${mark.pages.filter((p) => p <= ctx.pages).join(',') || '1'}`] : [];
    const run = await ctx.exec(['qpdf', current, mark.underlay ? '--underlay' : '--overlay', '.quire-stamp.pdf', ...to, '--from=1', '--repeat=1', '--', out]);
    if (!qpdfOk(run)) return failed('qpdf (watermark)', run);
    current = out;
  }
  if (current !== main) {
    const refused = await scanDelivered(ctx, current, 'the stamped PDF');
    if (refused) return refused;
  }
  const images = output.pageImages ? await renderPages(ctx, output, current) : [];
  if ('failed' in images) return failed('pdftoppm', images.failed);

  if (output.compress || output.linearize || output.encrypt) {
    const out = next();
    // One qpdf job given as JSON (qpdf --job-json-file): the passwords are string values,
    // never arguments, so no password can be read as an option ("--bits=40", "@file", "--").
    await put('.quire-write.json', JSON.stringify(writeJob(output, current, out)));
    const run = await ctx.exec(['sh', '-c', 'qpdf --job-json-file=.quire-write.json; rc=$?; rm -f .quire-write.json; exit $rc']);
    // qpdf's words are withheld when the job carried passwords: no secret reaches a reason, a job record or a replay.
    if (!qpdfOk(run)) return output.encrypt ? { ok: false, kind: 'failed', reasons: [`qpdf could not write the encrypted PDF (exit ${run.code})`] } : failed('qpdf', run);
    current = out;
  }
  const pdf = await ctx.workspace.read(current, ctx.maxFileBytes);
  if (!(pdf instanceof Buffer)) return { ok: false, kind: 'failed', reasons: ['the post-processed PDF could not be read back'] };
  return { ok: true, pdf, images: 'failed' in images ? [] : images, ...(conformance ? { conformance } : {}) };
}

/** The final write as a qpdf job (qpdf --job-json-help): compression, linearization, encryption. */
function writeJob(output: OutputSpec, input: string, out: string): Record<string, unknown> {
  const job: Record<string, unknown> = { inputFile: input, outputFile: out };
  if (output.compress) {
    Object.assign(job, { recompressFlate: '', compressionLevel: '9' });
    if (output.pdfStandard !== 'a-1b') job.objectStreams = 'generate';
  }
  if (output.linearize) job.linearize = '';
  if (output.encrypt) {
    const { userPassword, ownerPassword, permissions: p } = output.encrypt;
    const yn = (allowed: boolean) => (allowed ? 'y' : 'n');
    job.encrypt = {
      userPassword,
      ownerPassword,
      '256bit': {
        print: p.print ? 'full' : 'none',
        modify: p.modify ? 'all' : 'none',
        extract: yn(p.copy),
        annotate: yn(p.annotate),
        form: yn(p.fillForms),
        accessibility: yn(p.accessibility),
      },
    };
  }
  return job;
}

/**
 * The active-content scan (pdfcheck.ts) of a PDF the step made from the caller's input: read
 * in-process, or by qpdf in the sandbox where that reader declines. TeX's own PDF was scanned
 * before the step; after this scan only the final qpdf write runs, which re-encodes the same
 * objects (compression, object streams, linearization, encryption) and adds none.
 */
async function scanDelivered(ctx: StepContext, file: string, what: string): Promise<StepResult | null> {
  const pdf = await ctx.workspace.read(file, ctx.maxFileBytes);
  if (!(pdf instanceof Buffer)) return { ok: false, kind: 'failed', reasons: [`${what} could not be read back`] };
  return verdict(await findings(ctx, pdf, async () => file), what);
}

/** A PDF reader finds a PDF's header in its first 1,024 bytes (whatever the file's name). */
const looksLikePdf = (data: Buffer) => data.subarray(0, 1024).includes('%PDF-');

/**
 * Attached PDFs, which a reader opens as documents of their own: the scan of the delivered
 * PDF sees their streams only as data, so each is scanned as it enters (the bytes the caller
 * sent, copied into the workspace only when the sandbox's qpdf has to read them).
 */
async function scanAttachments(ctx: StepContext, output: OutputSpec, put: (name: string, data: Buffer) => Promise<void>): Promise<StepResult | null> {
  for (const [i, attachment] of (output.attachments ?? []).entries()) {
    if (!looksLikePdf(attachment.data)) continue;
    const copy = async () => {
      await put(`.quire-attached-${i + 1}.pdf`, attachment.data);
      return `.quire-attached-${i + 1}.pdf`;
    };
    const refused = verdict(await findings(ctx, attachment.data, copy), `the attachment ${attachment.name}`);
    if (refused) return refused;
  }
  return null;
}

/** The scan's findings for `pdf` (null: it could not be inspected); `file` names it in the workspace for qpdf. */
async function findings(ctx: StepContext, pdf: Buffer, file: () => Promise<string>): Promise<string[] | null> {
  const read = inspectPdf(pdf);
  if (read) return read.active;
  const scanned = await ctx.inspect(await file());
  return 'unmeasurable' in scanned ? null : scanned.active;
}

function verdict(found: string[] | null, what: string): StepResult | null {
  if (found === null) return { ok: false, kind: 'failed', reasons: [`${what} could not be inspected for active content`] };
  return found.length > 0 ? { ok: false, kind: 'active', reasons: found.map((finding) => `${finding} in ${what}`) } : null;
}

/** Info entries and an XMP packet written with qpdf's JSON update (objects read from the PDF first). */
async function writeMetadata(
  ctx: StepContext,
  output: OutputSpec,
  input: string,
  out: string,
  put: (name: string, data: string) => Promise<void>,
): Promise<{ ok: true; name: string } | { ok: false; run: Exec }> {
  const objects = async (...ids: string[]) => {
    const run = await ctx.exec(['sh', '-c', 'qpdf --json=2 --json-key=qpdf "$@" > .quire-json 2>&1; echo $?', 'qpdf', ...ids.map((id) => `--json-object=${id}`), input], JSON_CAP);
    const text = await ctx.workspace.read('.quire-json', JSON_CAP);
    const json = text instanceof Buffer ? (JSON.parse(text.toString('utf8')) as { qpdf: [{ maxobjectid: number }, Record<string, { value: Record<string, unknown> }>] }) : null;
    return { run, json };
  };
  const metadata = output.metadata ?? {};
  const first = await objects('trailer');
  const trailer = first.json?.qpdf[1].trailer?.value;
  const root = typeof trailer?.['/Root'] === 'string' ? trailer['/Root'] : null;
  if (!first.json || !root) return { ok: false, run: first.run };
  const info = typeof trailer?.['/Info'] === 'string' ? trailer['/Info'] : null;
  const second = await (info ? objects(root.split(' ')[0]!, info.split(' ')[0]!) : objects(root.split(' ')[0]!));
  const found = second.json?.qpdf[1];
  if (!found) return { ok: false, run: second.run };
  const max = second.json!.qpdf[0].maxobjectid;
  const xmpRef = `${max + 1} 0 R`;
  const update: Record<string, unknown> = {
    [`obj:${root}`]: { value: { ...found[`obj:${root}`]?.value, '/Metadata': xmpRef, ...(metadata.lang ? { '/Lang': `u:${metadata.lang}` } : {}) } },
    [`obj:${xmpRef}`]: { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, data: Buffer.from(xmpPacket(metadata)).toString('base64') } },
  };
  const entries = infoEntries(metadata);
  if (info) update[`obj:${info}`] = { value: { ...found[`obj:${info}`]?.value, ...entries } };
  else {
    const infoRef = `${max + 2} 0 R`;
    update[`obj:${infoRef}`] = { value: entries };
    update.trailer = { value: { '/Root': root, '/Info': infoRef, ...(trailer?.['/ID'] ? { '/ID': trailer['/ID'] } : {}) } };
  }
  await put('.quire-meta.json', JSON.stringify({ qpdf: [{ ...second.json!.qpdf[0] }, update] }));
  const run = await ctx.exec(['qpdf', input, '--update-from-json=.quire-meta.json', out]);
  return qpdfOk(run) ? { ok: true, name: out } : { ok: false, run };
}

/** The asked pages as PNGs (pdftoppm, one file per page), their sizes read from the PNG header. */
async function renderPages(ctx: StepContext, output: OutputSpec, input: string): Promise<PageImage[] | { failed: Exec }> {
  const spec = output.pageImages!;
  const wanted = spec.pages === 'all' ? Array.from({ length: ctx.pages }, (_, i) => i + 1) : spec.pages.filter((p) => p <= ctx.pages);
  const pages = wanted.slice(0, spec.maxPages);
  const script = 'dpi=$1; in=$2; shift 2; for p in "$@"; do pdftoppm -png -r "$dpi" -f "$p" -l "$p" -singlefile "$in" ".quire-page-$p" || exit 1; done';
  const run = await ctx.exec(['sh', '-c', script, 'pdftoppm', String(spec.dpi), input, ...pages.map(String)]);
  if (run.code !== 0) return { failed: run };
  const images: PageImage[] = [];
  for (const page of pages) {
    const png = await ctx.workspace.read(`.quire-page-${page}.png`, ctx.maxFileBytes);
    if (!(png instanceof Buffer) || png.length < 24) return { failed: { code: 1, output: `page ${page} was not rendered` } };
    images.push({ page, width: png.readUInt32BE(16), height: png.readUInt32BE(20), png });
  }
  return images;
}
