// The client's only way to the service: POST /api/v1/compile through the generated
// @quire/client, asking for the PDF itself in the answer (extension), else (a server without
// it) the PDF behind its signed link. Failures come back as values a
// command can act on — a refusal with its catalogue body and exit code, or a connection
// problem said in words — never as a stack trace.
import { compilePdf, createQuireClient, downloadPdf } from '../../../clients/typescript/src/index.js';
import { nodeFetch } from './transport.js';
import type { Refusal } from './print.js';

/** Exit codes of `quire compile` (docs/cli.md). */
export const EXIT = { pdf: 0, failed: 1, usage: 2, quota: 3 } as const;

/** Refusals about the plan or a quota: exit 3, and the message says what to do. */
const QUOTA = new Set([
  'rate_limit',
  'rate_limit_exceeded',
  'anonymous_quota_exhausted',
  'anonymous_capacity_exhausted',
  'failure_budget_exhausted',
  'too_many_concurrent_compiles',
  'preview_in_progress',
  'plan_required',
  'compiler_not_available',
  'assets_not_allowed',
  'assets_not_available_anonymously',
  'too_many_assets',
  'assets_too_large',
  'latex_too_large',
  'page_limit_exceeded',
  'pdf_too_large',
]);
/** Refusals of the call itself (key, options, server state): exit 2. Everything else is the document's: exit 1. */
const USAGE = new Set(['invalid_api_key', 'missing_api_key', 'validation_failed', 'texlive_not_available', 'payload_too_large', 'bad_request', 'invalid_json', 'unsupported_media_type']);

export function exitCodeOf(error: string, status: number): number {
  if (QUOTA.has(error)) return EXIT.quota;
  if (USAGE.has(error) || status >= 500 || status === 404 || status === 405) return EXIT.usage;
  return EXIT.failed;
}

/** The server could not be reached, or what answered is not a Quire server: exit 2. */
export class ConnectionError extends Error {}

export interface Delivered {
  ok: true;
  body: Record<string, unknown> & { pdf_url: string; pages: number; compilation_time_ms: number };
  pdf: Uint8Array;
}
export interface Refused {
  ok: false;
  status: number;
  body: Refusal;
}

function notQuire(server: string, status: number, type: string): ConnectionError {
  return new ConnectionError(`${server} answered HTTP ${status} (${type || 'no content type'}), not a Quire API answer: is --server the address of a Quire server?`);
}

function unreachable(server: string, err: unknown): ConnectionError {
  if (err instanceof ConnectionError) return err;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new ConnectionError(`cannot reach the Quire server at ${server} (${why}); start one with \`npm start\`, or name another with --server or QUIRE_URL`);
}

/** Compiles the zipped project on `server`; the PDF's bytes when it is delivered. */
export async function compileRemote(
  server: string,
  key: string | null,
  body: Record<string, unknown>,
  options: { signal?: AbortSignal; stage?: (name: string) => void } = {},
): Promise<Delivered | Refused> {
  const { signal } = options;
  // Remember what answered: openapi-fetch reads every body as JSON, and a web server that is
  // not Quire answers HTML.
  let answered: { status: number; type: string } | null = null;
  const watchingFetch: typeof fetch = async (input, init) => {
    const res = await nodeFetch(input, { ...init, signal });
    answered = { status: res.status, type: res.headers.get('content-type') ?? '' };
    return res;
  };
  const client = createQuireClient({ baseUrl: server, apiKey: key ?? undefined, fetch: watchingFetch, Request });
  let answer;
  try {
    // One round trip where the server offers it: the PDF is the answer (extension, docs/api.md).
    // The body is the schema's compile request; project_zip is one of its fields.
    answer = await compilePdf(client, body as { project_zip: string }, { signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    const seen = answered as { status: number; type: string } | null;
    if (seen) throw notQuire(server, seen.status, seen.type);
    throw unreachable(server, err);
  }
  const status = answer.response.status;
  if (answer.error !== undefined || !answer.result || typeof answer.result !== 'object' || !('pdf_url' in answer.result)) {
    const refusal = (answer.error ?? {}) as Partial<Refusal>;
    if (typeof refusal.error !== 'string') throw notQuire(server, status, answer.response.headers.get('content-type') ?? '');
    return { ok: false, status, body: refusal as Refusal };
  }
  const delivered = answer.result as Delivered['body'];
  if (answer.pdf) return { ok: true, body: delivered, pdf: answer.pdf };
  // A server without the extension answered SPEC's JSON: the PDF is behind its signed link.
  // Fetched from the server this command talks to: its QUIRE_BASE_URL may name a public
  // address that is not reachable from here (or not yet set up, on a local server).
  const signed = new URL(delivered.pdf_url);
  const local = new URL(server.endsWith('/') ? server : `${server}/`);
  const from = signed.origin === local.origin ? signed.href : `${local.origin}${signed.pathname}${signed.search}`;
  options.stage?.('downloading the PDF');
  try {
    return { ok: true, body: delivered, pdf: await downloadPdf(from, { fetch: watchingFetch }) };
  } catch (err) {
    if (signal?.aborted) throw err;
    throw (err as { status?: number }).status ? new ConnectionError(`the PDF download from ${server} failed: ${(err as Error).message}`) : unreachable(server, err);
  }
}
