// The `fetch` the client commands hand to @quire/client: node:http(s) underneath instead of
// Node's built-in fetch. A command makes one or two requests and exits, and the built-in
// fetch's first request costs more than all the rest of the command's own work: undici
// compiles its HTTP parser (WebAssembly) on the first connection, 40-60 ms of CPU measured
// on the bench machine. node:http's parser is native. The generated client still builds every
// request and reads every answer (docs/cli.md#how-fast).
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';

/** A fetch failure the way the built-in fetch reports one: TypeError('fetch failed') with the socket error as its cause. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** Body bytes of what openapi-fetch passes: a Request (the client's), with a string or bytes body. */
async function bodyOf(request: Request): Promise<Buffer | undefined> {
  if (request.body === null) return undefined;
  return Buffer.from(await request.arrayBuffer());
}

async function send(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fetchFailed(new Error(`unsupported protocol ${url.protocol}`));
  const options: RequestOptions = { method, headers: body ? { ...headers, 'content-length': String(body.length) } : headers };
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const req: ClientRequest = request(url, options, resolve);
    const onAbort = () => req.destroy(abortError(signal!) as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => reject(signal?.aborted ? abortError(signal) : fetchFailed(err)));
    req.on('close', () => signal?.removeEventListener('abort', onAbort));
    req.end(body);
  });
}

async function readAll(res: IncomingMessage, signal: AbortSignal | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res) chunks.push(chunk as Buffer);
  } catch (err) {
    throw signal?.aborted ? abortError(signal) : fetchFailed(err);
  }
  return Buffer.concat(chunks);
}

/** A `fetch` over node:http(s) for @quire/client: follows redirects as fetch does, honours the request's signal. */
export async function nodeFetch(input: Request | string | URL, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request ? input : new Request(input, init);
  const signal = init?.signal ?? request.signal;
  let url = new URL(request.url);
  let method = request.method;
  let body = await bodyOf(request);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  for (let hop = 0; ; hop++) {
    const res = await send(url, method, headers, body, signal);
    const location = res.headers.location;
    if (REDIRECTS.has(res.statusCode ?? 0) && location && hop < MAX_REDIRECTS) {
      res.resume();
      url = new URL(location, url);
      // As fetch does: 303 (and 301/302 after a POST) go on as a GET without the body.
      if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      continue;
    }
    const data = await readAll(res, signal);
    const answer = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, one);
    }
    const status = res.statusCode ?? 0;
    // A Response may not carry a body with these statuses.
    const empty = status === 204 || status === 205 || status === 304 || method === 'HEAD';
    // A Buffer is a Uint8Array, a body Response takes (the DOM typings list only ArrayBuffer-backed views).
    return new Response(empty ? null : (data as unknown as BodyInit), { status, statusText: res.statusMessage ?? '', headers: answer });
  }
}
