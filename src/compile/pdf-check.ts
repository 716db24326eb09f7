// POST /api/v1/pdf/check and MCP check_pdf (issue 40): the conformance checks of a compile's
// report (tex/output/conformance.ts) run on a PDF the caller sends. Free and rate-limited like
// validate (the same per-minute budget, the same gate against crowding the event loop); the
// PDF is bounded (QUIRE_PDF_CHECK_MAX_MB) and read by qpdf and pdfinfo in a sandbox of its
// own. Nothing is stored: the PDF lives in a temporary folder for the check's duration.
import { Type, type Static } from '@sinclair/typebox';
import type { Caller } from '../accounts/caller.js';
import { decodeCompact, readBase64 } from '../base64.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, invalidField } from '../errors.js';
import type { Counters } from '../quota/counters.js';
import { chargeValidate } from '../quota/validate-limit.js';
import { checkUploadedPdf } from '../tex/output/conformance-read.js';
import type { PdfStandard, UaStandard } from '../tex/output/spec.js';
import { ConformanceBody, KERNEL_STANDARDS, PDF_STANDARDS } from './output-schema.js';
import { ValidateGate } from './validate-gate.js';

const STANDARD = Type.Union([...PDF_STANDARDS, ...KERNEL_STANDARDS].map((level) => Type.Literal(level)));

export const PdfCheckBody = Type.Object(
  {
    pdf_base64: Type.String({ minLength: 1, description: 'The PDF, base64 (at most QUIRE_PDF_CHECK_MAX_MB, 20 MB by default, decoded)' }),
    standards: Type.Optional(
      Type.Array(STANDARD, { minItems: 1, maxItems: 2, description: 'The standards to check against, e.g. ["ua-2"]; by default those its XMP claims (pdfaid, pdfuaid). The tagging checks always run.' }),
    ),
  },
  { additionalProperties: false },
);

export const PdfCheckResponse = Type.Object({
  pages: Type.Integer(),
  conformance: ConformanceBody,
});

type Deps = { config: Config; clock: Clock; counters: Counters };

export class PdfCheckService {
  private readonly gate = new ValidateGate();

  constructor(private readonly deps: Deps) {}

  async check(caller: Caller, input: Static<typeof PdfCheckBody>): Promise<Static<typeof PdfCheckResponse>> {
    const { config, clock, counters } = this.deps;
    const reading = readBase64(input.pdf_base64);
    if (!reading.ok) throw invalidField('pdf_base64', 'base64', 'must be base64');
    // Checked before anything is counted or decoded: an oversized PDF costs nothing.
    const { bytes } = reading;
    if (bytes > config.pdfCheckMaxBytes) {
      throw errors.pdf_check_too_large(`The PDF is ${bytes} bytes; this server checks PDFs of at most ${config.pdfCheckMaxBytes} bytes.`, { limit: config.pdfCheckMaxBytes, bytes });
    }
    const pdf = decodeCompact(reading.compact);
    if (!pdf) throw invalidField('pdf_base64', 'base64', 'must be base64 (it does not decode cleanly)');
    if (!pdf.subarray(0, 1024).includes('%PDF-')) throw invalidField('pdf_base64', 'format', 'must be a PDF (no %PDF- header in its first 1,024 bytes)');
    const asked = input.standards ? standardsOf(input.standards) : undefined;
    await chargeValidate(counters, clock.now(), caller, config.validatePerMinute);
    const result = await this.gate.run(() => checkUploadedPdf(pdf, config.sandbox, asked));
    if (!result.ok) throw invalidField('pdf_base64', 'unreadable', result.reason);
    return { pages: result.pages, conformance: result.report };
  }
}

function standardsOf(standards: string[]): { pdfa?: PdfStandard; ua?: UaStandard } {
  const pdfa = standards.filter((s) => s.startsWith('a-'));
  const ua = standards.filter((s) => s.startsWith('ua-'));
  if (pdfa.length > 1 || ua.length > 1) throw invalidField('standards', 'combination', 'names at most one PDF/A level and one PDF/UA part');
  return { ...(pdfa[0] ? { pdfa: pdfa[0] as PdfStandard } : {}), ...(ua[0] ? { ua: ua[0] as UaStandard } : {}) };
}
