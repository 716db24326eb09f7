// Whether a PDF meets the PDF/A level asked for. Every level gets the structural check
// (docs/pdf-output.md): XMP pdfaid part and conformance as asked, an OutputIntent in the
// catalog, no encryption, every font embedded, read from the runner's in-process parse of
// TeX's PDF (tex/pdf/pdfread.ts) or, where that parser declines, with poppler and qpdf in the
// sandbox. PDF/A-1b also goes through Apache PDFBox Preflight, which checks the rest of
// ISO 19005-1 (transparency among it): by a warm validator when one is ready
// (warm-validator.ts), else cold, java in the job's sandbox.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Exec } from '../sandbox/session.js';
import type { Workspace } from '../sandbox/workspace.js';
import { PDFBOX_CLASSPATH, preflightJar } from './preflight-java.js';
import type { PdfaFacts } from '../pdf/pdfread.js';
import type { PdfStandard } from './spec.js';
import { JVM, VALIDATOR_MAX_BYTES, type WarmValidators } from './warm-validator.js';

interface CheckContext {
  exec: (argv: string[], fileBytes?: number) => Promise<Exec>;
  workspace: Workspace;
  dir: string;
  /** The structural facts of `pdf`, when the in-process reader (tex/pdf/pdfread.ts) could read it. */
  facts?: PdfaFacts;
  /** The warm validators of this process (none: always cold). */
  validators?: WarmValidators | undefined;
  /** The job's deadline (performance.now() time) and stop signal, which a warm validation keeps too. */
  deadline?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Whose job it is (an account, a keyless address, the gallery): a warm validator serves one scope only. */
  scope?: string | undefined;
}

const JAR = '.quire-preflight.jar';
const MAX_REASONS = 20;

/** Reasons the PDF fails `standard`; none when it passes. `facts`: what the check read (for the conformance report). */
export async function checkStandard(ctx: CheckContext, standard: PdfStandard, pdf: string): Promise<string[] & { facts?: PdfaFacts & { encrypted?: boolean } }> {
  const facts = ctx.facts ?? (await toolFacts(ctx, pdf));
  const reasons = structuralReasons(standard, facts);
  if (standard === 'a-1b') reasons.push(...(await preflight(ctx, pdf)));
  return Object.assign([...new Set(reasons)].slice(0, MAX_REASONS), { facts });
}

/** The structural check on what either reader found. */
export function structuralReasons(standard: PdfStandard, facts: PdfaFacts & { encrypted?: boolean }): string[] {
  const [part, conformance] = [standard.charAt(2), standard.charAt(3).toUpperCase()];
  const reasons: string[] = [];
  if (facts.encrypted) reasons.push('the PDF is encrypted');
  const xmp = facts.xmp ?? '';
  const partFound = /pdfaid:part(?:>|=")\s*(\d)/.exec(xmp)?.[1];
  // PDF/A-4 has no conformance level (a-4) or F and E (a-4f, a-4e).
  const confFound = /pdfaid:conformance(?:>|=")\s*([ABUFE])/i.exec(xmp)?.[1]?.toUpperCase() ?? '';
  if (partFound !== part || confFound !== conformance) {
    reasons.push(`XMP pdfaid identifies ${partFound ? `PDF/A-${partFound}${confFound.toLowerCase()}` : 'no PDF/A level'}, not PDF/A-${part}${conformance.toLowerCase()}`);
  }
  for (const font of facts.unembeddedFonts) reasons.push(`font ${font} is not embedded`);
  if (facts.outputIntents === 0) reasons.push('the catalog has no /OutputIntents');
  return reasons;
}

/** The same facts from poppler and qpdf in the sandbox, for a PDF the in-process reader declined. */
async function toolFacts(ctx: CheckContext, pdf: string): Promise<PdfaFacts & { encrypted: boolean }> {
  const script = 'pdfinfo "$1" | grep -i "^Encrypted:"; echo "@@XMP"; pdfinfo -meta "$1"; echo "@@FONTS"; pdffonts "$1"; echo "@@INTENT"; qpdf --qdf --object-streams=disable "$1" - 2>/dev/null | grep -a -c "/OutputIntents"';
  const run = await ctx.exec(['sh', '-c', script, 'check', pdf], 64 * 1024 * 1024);
  const out = run.output;
  const fonts = out.slice(out.indexOf('@@FONTS') + 8, out.indexOf('@@INTENT')).split('\n');
  const header = fonts.find((line) => /\bemb\b/.test(line));
  const unembeddedFonts: string[] = [];
  if (header) {
    const at = header.indexOf('emb');
    for (const line of fonts.slice(fonts.indexOf(header) + 2)) {
      if (line.trim() && line.slice(at, at + 3).trim() === 'no') unembeddedFonts.push(line.split(/\s+/)[0]!);
    }
  }
  return {
    encrypted: /^Encrypted:\s+yes/im.test(out),
    xmp: out.slice(out.indexOf('@@XMP'), out.indexOf('@@FONTS')),
    unembeddedFonts,
    outputIntents: Number(/(\d+)\s*$/.exec(out.trim())?.[1] ?? '0'),
  };
}

/**
 * PDFBox Preflight's errors (code and details), or why it could not run. A warm validator gets
 * the PDF's bytes as the job's reader reads them; without its verdict the job runs it cold.
 * Either way one validator is started afterwards if fewer than the configured number wait.
 */
async function preflight(ctx: CheckContext, pdf: string): Promise<string[]> {
  const started = performance.now();
  const warm = (await ctx.validators?.serve(() => ctx.workspace.read(pdf, VALIDATOR_MAX_BYTES), ctx.deadline, ctx.signal, ctx.scope)) ?? null;
  try {
    return verdict(warm ?? (await cold(ctx, pdf)));
  } finally {
    ctx.validators?.served(warm !== null, performance.now() - started);
    ctx.validators?.refill();
  }
}

/** Preflight run cold: java in the job's sandbox on the job's file. */
async function cold(ctx: CheckContext, pdf: string): Promise<Exec | string> {
  let jar: Buffer;
  try {
    jar = await preflightJar();
  } catch {
    return 'the PDF/A-1b validator (PDFBox Preflight) is not available on this server';
  }
  await writeFile(join(ctx.dir, JAR), jar, { flag: 'wx', mode: 0o644 });
  const argv = ['java', ...JVM, '-cp', [JAR, ...PDFBOX_CLASSPATH].join(':'), 'Preflight', pdf];
  return ctx.exec(['sh', '-c', 'exec "$@" 2>/dev/null', 'java', ...argv]);
}

/** Preflight's answer (or why there is none) as reasons. */
function verdict(run: Exec | string): string[] {
  if (typeof run === 'string') return [run];
  if (run.code === 0 && /^VALID$/m.test(run.output)) return [];
  const lines = run.output.split('\n').map((line) => line.trim()).filter((line) => /^\d+(\.\d+)*\s/.test(line));
  return lines.length > 0 ? lines.map((line) => `PDFBox Preflight ${line}`) : [`PDFBox Preflight did not run to its end (exit ${run.code})`];
}
