// @quire/client: the generated, typed client of the Quire API (openapi-fetch over schema.ts,
// which openapi-typescript writes from openapi.json) and the few things a generator cannot
// know: the signed PDF download, waiting for an async job, verifying a webhook signature.
import createClient, { type Client } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
/**
 * Typed for the JSON answers: the media type the client reads by default. (POST /api/v1/compile
 * may also answer application/pdf when asked, an extension `compilePdf` handles.)
 */
export type QuireClient = Client<paths, 'application/json'>;

/** A job as GET /api/v1/jobs/{job_id} returns it. */
export type Job = operations['getJob']['responses'][200]['content']['application/json'];
/** The error body of any refusal: `error` is a catalogue code (docs/errors.md). */
export interface QuireError {
  error: string;
  message: string;
  [field: string]: unknown;
}

export interface QuireClientOptions {
  /** The server, e.g. http://localhost:8080. */
  baseUrl: string;
  /** An API key; without one the anonymous tier applies where the API allows it. */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  /** The Request class the client builds requests with (default the global one); a custom `fetch` receives them. */
  Request?: typeof globalThis.Request;
}

/** A typed client: `client.POST('/api/v1/compile', { body })` answers `{ data }` or `{ error }`, never throws for a refusal. */
export function createQuireClient(options: QuireClientOptions): QuireClient {
  return createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.Request ? { Request: options.Request } : {}),
  });
}

/** The bytes of a PDF behind its signed `pdf_url` (no credentials needed); throws the error body otherwise. */
export async function downloadPdf(pdfUrl: string, init: { range?: string; fetch?: typeof globalThis.fetch } = {}): Promise<Uint8Array> {
  const res = await (init.fetch ?? fetch)(pdfUrl, { headers: init.range ? { range: init.range } : {} });
  if (!res.ok) throw Object.assign(new Error(`PDF download failed with ${res.status}`), { status: res.status, body: (await res.json()) as QuireError });
  return new Uint8Array(await res.arrayBuffer());
}

/** A compile request: the body of POST /api/v1/compile. */
export type CompileRequest = operations['compile']['requestBody']['content']['application/json'];
/** SPEC's 200 body of POST /api/v1/compile. */
export type CompileSuccess = operations['compile']['responses'][200]['content']['application/json'];

/** What `compilePdf` asks for: the PDF itself (extension), else SPEC's JSON answer. */
export const PDF_OR_JSON = 'application/pdf, application/json;q=0.5';

/**
 * One compile, and the PDF in the same round trip where the server offers it (extension:
 * `Accept: application/pdf` answers the PDF with the success body in the Quire-Result header,
 * docs/api.md). `pdf` is null when the server answered SPEC's JSON (a server without the
 * extension, or a success body too large for a header): fetch it with `downloadPdf(result.pdf_url)`.
 * A refusal comes back as `error` (the catalogue body), as with `client.POST`. Not for
 * `async: true` (its 202 is a job, not a PDF).
 */
export async function compilePdf(
  client: QuireClient,
  body: Omit<CompileRequest, 'async' | 'callback_url'>,
  init: { signal?: AbortSignal } = {},
): Promise<{ result: CompileSuccess; pdf: Uint8Array | null; error?: undefined; response: Response } | { result?: undefined; pdf?: undefined; error: QuireError; response: Response }> {
  const { data, error, response } = await client.POST('/api/v1/compile', {
    body: body as CompileRequest,
    headers: { accept: PDF_OR_JSON },
    parseAs: 'arrayBuffer',
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (error !== undefined) return { error: error as QuireError, response };
  const bytes = new Uint8Array(data as unknown as ArrayBuffer);
  if ((response.headers.get('content-type') ?? '').startsWith('application/pdf')) {
    return { result: JSON.parse(response.headers.get('quire-result') ?? 'null') as CompileSuccess, pdf: bytes, response };
  }
  return { result: JSON.parse(new TextDecoder().decode(bytes)) as CompileSuccess, pdf: null, response };
}

/** Polls GET /api/v1/jobs/{job_id} until the job succeeded or failed (or `timeoutMs` passes). */
export async function waitForJob(client: QuireClient, jobId: string, options: { intervalMs?: number; timeoutMs?: number } = {}): Promise<Job> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const { data, error } = await client.GET('/api/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } });
    if (error) throw Object.assign(new Error(`job ${jobId}: ${error.error}`), { body: error });
    if (data.status === 'succeeded' || data.status === 'failed') return data;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${data.status} after ${options.timeoutMs ?? 120_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
  }
}

/**
 * The payload of a webhook delivery, once its Standard Webhooks signature checks out against the
 * account's secret (GET /api/v1/webhooks/secret); throws when it does not or is too old.
 */
export function verifyWebhook(secret: string, rawBody: string, headers: Record<string, string | string[] | undefined>): unknown {
  const flat = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value[0] : (value ?? '')]));
  return new Webhook(secret).verify(rawBody, flat as Record<string, string>);
}
