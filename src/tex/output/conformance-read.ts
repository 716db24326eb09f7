// Reads what the conformance checks look at (conformance.ts): qpdf's JSON of a PDF's objects
// and its XMP packet (pdfinfo -meta), both written by the tools inside a sandbox; the host
// reads the two files back, capped, and parses the JSON (no stream data in it: the object
// structure only). In a TeX job it runs in the job's own sandbox on the job's PDF; for a PDF
// checked on its own (POST /api/v1/pdf/check) in a fresh sandbox of its own, as nobody.
import { chown, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PdfaFacts } from '../pdf/pdfread.js';
import { defaultImageRoot } from '../image/default.js';
import { runSandboxed } from '../sandbox/sandboxed.js';
import { NOBODY_UID, sandboxUid } from '../sandbox/uids.js';
import type { Exec } from '../sandbox/session.js';
import type { Workspace } from '../sandbox/workspace.js';
import { claimedStandards, conformanceChecks, conformanceReport, modelFacts, pdfaChecks, structureSignature, type ConformanceReport } from './conformance.js';
import { MODEL_JSON_MAX, PdfModel } from './pdf-model.js';
import type { OutputSpec, PdfStandard, UaStandard } from './spec.js';

const XMP_MAX = 4 * 1024 * 1024;
/** qpdf's JSON (exit 3: read with warnings, still good), then the XMP; qpdf's exit code is the script's. */
const SCRIPT = 'qpdf --json=2 --json-key=qpdf "$1" >.quire-conf.json 2>/dev/null; rc=$?; pdfinfo -meta "$1" >.quire-conf.xmp 2>/dev/null; exit $rc';
const PREFLIGHT = 'Apache PDFBox Preflight';

interface Read {
  model: PdfModel | null;
  xmp: string | null;
}

/**
 * The report on a TeX job's PDF (`file` in its workspace) for what `output` claims. PDF/A alone
 * needs no object model: its checks come from the facts the PDF/A check already read.
 */
export async function jobConformance(
  ctx: { exec: (argv: string[], fileBytes?: number) => Promise<Exec>; workspace: Workspace },
  output: OutputSpec,
  file: string,
  facts: (PdfaFacts & { encrypted?: boolean }) | undefined,
): Promise<ConformanceReport> {
  const standards = [output.pdfStandard, output.tagging?.ua].filter((s) => s !== undefined);
  const pdfa = output.pdfStandard && facts ? pdfaChecks(output.pdfStandard, facts, output.pdfStandard === 'a-1b' ? [] : undefined) : [];
  const validators = output.pdfStandard === 'a-1b' ? [PREFLIGHT] : [];
  if (!output.tagging) return conformanceReport(standards, pdfa, validators);
  const run = await ctx.exec(['sh', '-c', SCRIPT, 'conformance', file], MODEL_JSON_MAX);
  const json = run.code === 0 || run.code === 3 ? await ctx.workspace.read('.quire-conf.json', MODEL_JSON_MAX) : null;
  const xmp = await ctx.workspace.read('.quire-conf.xmp', XMP_MAX);
  const read = {
    model: json instanceof Buffer ? PdfModel.parse(json.toString('utf8')) : null,
    xmp: xmp instanceof Buffer ? xmp.toString('utf8') : null,
  };
  const wanted = { pdfa: output.pdfStandard, ua: output.tagging.ua, tagged: true };
  return conformanceReport(standards, [...pdfa, ...tagChecks(read, wanted)], validators);
}

function tagChecks(read: Read, wanted: { pdfa?: PdfStandard | undefined; ua?: UaStandard | undefined; tagged: boolean }) {
  if (!read.model) return [{ id: 'pdf_objects_read', passed: false, detail: 'qpdf could not read the objects of the PDF' }];
  return conformanceChecks(read.model, read.xmp, wanted);
}

export type UploadCheck = { ok: true; report: ConformanceReport; pages: number } | { ok: false; reason: string };

const TIMEOUT_MS = 30_000;

/**
 * The checks on a caller's PDF, for the standards it names or else those its XMP claims; the
 * tagging checks always run. The PDF is read by readPdf (a fresh sandbox).
 */
export async function checkUploadedPdf(pdf: Buffer, isolate: boolean, asked?: { pdfa?: PdfStandard; ua?: UaStandard }): Promise<UploadCheck> {
  const read = await readPdf(pdf, isolate);
  if ('reason' in read) return { ok: false, reason: read.reason };
  const { model, xmp } = read;
  const claims = asked ?? claimedStandards(xmp);
  const standards = [claims.pdfa, claims.ua].filter((s) => s !== undefined);
  const pdfa = claims.pdfa ? pdfaChecks(claims.pdfa, modelFacts(model, xmp)) : [];
  const report = conformanceReport(standards, [...pdfa, ...conformanceChecks(model, xmp, { pdfa: claims.pdfa, ua: claims.ua, tagged: true })]);
  return { ok: true, report, pages: model.pages().length };
}

/** The tagged structure of `pdf` (conformance.ts structureSignature), read as checkUploadedPdf reads it; null when it cannot be read. */
export async function pdfStructure(pdf: Buffer, isolate: boolean): Promise<string | null> {
  const read = await readPdf(pdf, isolate);
  return 'reason' in read ? null : structureSignature(read.model);
}

/**
 * qpdf's object model and the XMP of `pdf`: qpdf and pdfinfo run in a fresh sandbox (no
 * network, prlimit), on a copy in a folder of its own that is removed afterwards.
 */
async function readPdf(pdf: Buffer, isolate: boolean): Promise<{ model: PdfModel; xmp: string | null } | { reason: string }> {
  const root = join(tmpdir(), 'quire-pdfcheck');
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(join(root, 'check-'));
  const uid = sandboxUid(NOBODY_UID);
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
    if (uid !== undefined) for (const name of ['.', 'in.pdf']) await chown(join(dir, name), uid, uid);
    const limits = { cpuSeconds: 30, fileBytes: MODEL_JSON_MAX, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    const run = await runSandboxed({ workspace: dir, env: {}, isolate, limits, uid, root: defaultImageRoot() }, ['sh', '-c', SCRIPT, 'conformance', 'in.pdf'], { timeoutMs: TIMEOUT_MS, maxOutput: 64 * 1024 });
    if (run.killed === 'timeout') return { reason: 'reading the PDF took longer than 30 seconds' };
    if (run.code !== 0 && run.code !== 3) return { reason: 'qpdf could not read the file as a PDF' };
    const json = await plainFile(join(dir, '.quire-conf.json'), MODEL_JSON_MAX);
    if (json === 'over') return { reason: 'the PDF has too many objects to be checked' };
    const model = json ? PdfModel.parse(json.toString('utf8')) : null;
    if (!model) return { reason: 'qpdf could not read the objects of the PDF' };
    const xmpData = await plainFile(join(dir, '.quire-conf.xmp'), XMP_MAX);
    return { model, xmp: xmpData instanceof Buffer && xmpData.length > 0 ? xmpData.toString('utf8') : null };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A regular file the sandbox wrote (never a link it may have made), or 'over' past `cap`. */
async function plainFile(path: string, cap: number): Promise<Buffer | 'over' | null> {
  const stat = await lstat(path).catch(() => null);
  if (!stat?.isFile()) return null;
  if (stat.size > cap) return 'over';
  return readFile(path);
}
