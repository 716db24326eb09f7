// The RFC 3161 client for PAdES B-T: @libpdf/core builds the request and reads the token; this
// file is the HTTP under it, held to the webhooks' address policy (src/webhooks/address.ts):
// the operator's QUIRE_TSA_URL is resolved here, every address checked (no loopback, private,
// link-local or metadata address unless QUIRE_TSA_ALLOW_PRIVATE), the connection pinned to the
// checked address, no redirect followed, the answer bounded in bytes and time.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { HttpTimestampAuthority, type TimestampAuthority } from '@libpdf/core';
import { errors, ServiceError } from '../errors.js';
import { checkCallbackUrl, isForbiddenAddress } from '../webhooks/address.js';

export interface TsaSettings {
  url: string;
  allowPrivate: boolean;
  timeoutMs: number;
}

/** A timestamp reply is a few KB (a token with the TSA's certificates). */
const MAX_REPLY_BYTES = 64 * 1024;

export function tsaFailed(reason: string, retryable: boolean): ServiceError {
  return errors.timestamp_failed(`The timestamp authority did not give a timestamp: ${reason}. Nothing was charged.`, { reason, retryable });
}

/**
 * The authority @libpdf/core asks for the signature's timestamp token, and the refusal of its
 * last failed exchange (the library wraps errors in its own; the service answers with this one).
 */
export function timestampAuthority(settings: TsaSettings): { authority: TimestampAuthority; failure: () => ServiceError | undefined } {
  let failure: ServiceError | undefined;
  const fetch = async (input: unknown, init?: RequestInit) => {
    try {
      return await guardedPost(String(input), init, settings);
    } catch (err) {
      failure = err instanceof ServiceError ? err : tsaFailed('the exchange failed', true);
      throw new Error(failure.message);
    }
  };
  return { authority: new HttpTimestampAuthority(settings.url, { timeout: settings.timeoutMs, fetch: fetch as typeof globalThis.fetch }), failure: () => failure };
}

async function guardedPost(target: string, init: RequestInit | undefined, settings: TsaSettings): Promise<Response> {
  let url: URL;
  try {
    // TSAs commonly speak plain http: the token is signed, so http is allowed; the address rules are not relaxed.
    url = checkCallbackUrl(target, { allowHttp: true, allowPrivate: settings.allowPrivate });
  } catch (err) {
    const why = err instanceof ServiceError && typeof err.details.reason === 'string' ? err.details.reason : 'it is not an http(s) URL';
    throw tsaFailed(`QUIRE_TSA_URL is refused: ${why}`, false);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await dnsLookup(host, { all: true, verbatim: true });
  } catch {
    throw tsaFailed(`the name ${host} does not resolve`, true);
  }
  if (addresses.length === 0) throw tsaFailed(`the name ${host} has no address`, true);
  if (!settings.allowPrivate && addresses.some((a) => isForbiddenAddress(a.address))) {
    throw tsaFailed(`${host} is a private, loopback, link-local or reserved address`, false);
  }
  const body = Buffer.from(init?.body instanceof Uint8Array ? init.body : new Uint8Array());
  const reply = await post(url, addresses[0]!, body, settings.timeoutMs).catch((err: Error) => {
    throw tsaFailed(err.message, true);
  });
  if (reply.status < 200 || reply.status >= 300) throw tsaFailed(`it answered HTTP ${reply.status}`, reply.status >= 500);
  return new Response(new Uint8Array(reply.body), { status: reply.status });
}

function post(url: URL, pinned: { address: string; family: number }, body: Buffer, timeoutMs: number): Promise<{ status: number; body: Buffer }> {
  // The connection goes to the checked address whatever DNS says a moment later.
  const lookup = ((_host: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (opts?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const req = client.request(
      url,
      { method: 'POST', lookup, agent: false, headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply', 'content-length': body.length, 'user-agent': 'Quire-TSA/1' } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) req.destroy(new Error(`the answer is over ${MAX_REPLY_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(err.code ? `connection failed (${err.code})` : err.message));
    });
    req.end(body);
  });
}
