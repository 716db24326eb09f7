// Extension of SPEC 1.5.0 (docs/api.md#the-pdf-in-the-answer-accept-applicationpdf-extension):
// POST /api/v1/compile with an Accept header that prefers application/pdf answers the PDF's
// bytes themselves, the success body in the Quire-Result header, so a client that only wants
// the file (`quire compile`) needs one round trip instead of the compile and the download.
// SPEC's JSON answer stays the default: without such an Accept header nothing changes, and
// refusals, failures and 202s are JSON whatever Accept says.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Services } from '../services.js';

export const RESULT_HEADER = 'quire-result';
/**
 * A success body longer than this (a document with hundreds of warnings) is answered as JSON
 * after all: an HTTP client refuses headers past 16 KiB (Node's default), and the client asked
 * for JSON as its second choice anyway (`Accept: application/pdf, application/json;q=0.5`).
 */
export const MAX_RESULT_HEADER_BYTES = 8 * 1024;

/** The quality an Accept header gives `type` (0 when it does not accept it); `wildcards`: whether type/* and *\/* count. */
function quality(accept: string, type: string, wildcards: boolean): number {
  const [major] = type.split('/');
  let best = -1;
  let specificity = -1;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const level = range === type ? 2 : wildcards && range === `${major}/*` ? 1 : wildcards && range === '*/*' ? 0 : -1;
    if (level < 0 || level < specificity) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(value)) continue;
    if (level > specificity) best = value;
    else best = Math.max(best, value);
    specificity = level;
  }
  return Math.max(0, best);
}

/**
 * True when the Accept header names application/pdf itself (a wildcard is not enough) with a
 * higher quality than it gives JSON: `application/pdf` alone, or
 * `application/pdf, application/json;q=0.5`. A tie keeps SPEC's JSON.
 */
export function prefersPdf(accept: string | undefined): boolean {
  if (!accept) return false;
  const pdf = quality(accept, 'application/pdf', false);
  return pdf > 0 && pdf > quality(accept, 'application/json', true);
}

/** JSON with every non-ASCII character escaped (\uXXXX): still the same JSON, and a valid header value. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The 200 answer's OpenAPI entry: SPEC's JSON body, or (extension) the PDF with the body in Quire-Result. */
export function compileSuccessResponse<T extends object>(body: T) {
  return {
    description: 'CompileSuccess; with `Accept: application/pdf` (extension) the PDF itself, the CompileSuccess in the Quire-Result header',
    headers: {
      'Quire-Result': Type.String({
        description:
          'Extension, only on the application/pdf answer: the CompileSuccess body as JSON (non-ASCII escaped). ' +
          `When it would be longer than ${MAX_RESULT_HEADER_BYTES} bytes, the answer is the JSON body instead.`,
      }),
    },
    content: {
      'application/json': { schema: body },
      'application/pdf': { schema: Type.String({ format: 'binary', contentMediaType: 'application/pdf' }) },
    },
  };
}

/**
 * Sends the PDF of a delivered compile with its body in Quire-Result, when the caller asked
 * for it and the body fits; otherwise returns the body for Fastify to send as JSON.
 */
export async function inlinePdf<T>(services: Services, reply: FastifyReply, accept: string | undefined, body: T): Promise<T | FastifyReply> {
  const jobId = (body as { job_id?: unknown } | null)?.job_id;
  if (!prefersPdf(accept) || typeof jobId !== 'string') return body;
  const result = asciiJson(body);
  if (result.length > MAX_RESULT_HEADER_BYTES) return body;
  // The PDF as deliver() stored it (the signed pdf_url in the header serves the same bytes).
  const pdf = await services.pdfs.bytes(jobId);
  if (!pdf) return body;
  // The reply type follows the JSON schemas; this one sends the PDF's bytes.
  return (reply as FastifyReply)
    .header('content-type', 'application/pdf')
    .header('content-length', pdf.length)
    .header(RESULT_HEADER, result)
    .header('vary', 'Accept')
    .header('x-content-type-options', 'nosniff')
    .send(pdf);
}
