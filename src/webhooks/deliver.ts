// One webhook delivery attempt: resolve the host ourselves, refuse forbidden addresses, connect
// to the checked address (no second lookup), and follow redirects by hand, checking every hop.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { checkCallbackUrl, isForbiddenAddress, type CallbackPolicy } from './address.js';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface DeliveryOptions {
  policy: CallbackPolicy;
  timeoutMs: number;
  maxRedirects: number;
  /** DNS resolution; replaceable in unit tests to make a name resolve to a chosen address. */
  resolve?: Resolver;
  /** The address rule; unit tests exempt one loopback address to stand in for a public host. */
  isForbidden?: (address: string) => boolean;
}

/** `retry`: worth another attempt (5xx, 429, timeout, connection error); `final`: not. */
export type AttemptResult =
  | { outcome: 'delivered'; status: number; url: string }
  | { outcome: 'retry'; status?: number; error: string; url: string }
  | { outcome: 'final'; status?: number; error: string; url: string };

const systemResolve: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export async function deliverOnce(target: string, body: string, headers: Record<string, string>, options: DeliveryOptions): Promise<AttemptResult> {
  let url = target;
  for (let hop = 0; hop <= options.maxRedirects; hop++) {
    let parsed: URL;
    try {
      parsed = checkCallbackUrl(url, options.policy);
    } catch (err) {
      return { outcome: 'final', error: (err as Error).message, url };
    }
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await (options.resolve ?? systemResolve)(host);
    } catch (err) {
      return { outcome: 'retry', error: `DNS lookup of ${host} failed: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, url };
    }
    if (addresses.length === 0) return { outcome: 'retry', error: `${host} has no address`, url };
    const forbidden = addresses.find((a) => (options.isForbidden ?? isForbiddenAddress)(a.address));
    if (forbidden && !options.policy.allowPrivate) {
      return { outcome: 'final', error: `refused: ${host} resolves to ${forbidden.address}, a private, loopback, link-local or reserved address`, url };
    }
    const pinned = addresses[0]!;
    let response: { status: number; location?: string };
    try {
      response = await post(parsed, pinned, body, headers, options.timeoutMs);
    } catch (err) {
      return { outcome: 'retry', error: (err as Error).message, url };
    }
    const { status, location } = response;
    if (status >= 200 && status < 300) return { outcome: 'delivered', status, url };
    if (status >= 300 && status < 400 && location) {
      url = new URL(location, parsed).toString();
      continue;
    }
    if (status >= 500 || status === 429) return { outcome: 'retry', status, error: `receiver answered ${status}`, url };
    return { outcome: 'final', status, error: `receiver answered ${status}`, url };
  }
  return { outcome: 'final', error: `more than ${options.maxRedirects} redirects`, url };
}

function post(
  url: URL,
  pinned: { address: string; family: number },
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; location?: string }> {
  // The connection goes to the address we checked, whatever DNS says a moment later; TLS still
  // verifies the certificate against the URL's host name.
  const lookup = ((_host: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (opts?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolveAll, rejectAll) => {
    // One deadline for the whole exchange: a receiver that trickles its answer is a timeout too.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const resolve = (value: { status: number; location?: string }) => {
      clearTimeout(timer);
      resolveAll(value);
    };
    const reject = (err: Error) => {
      clearTimeout(timer);
      rejectAll(err);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Quire-Webhooks/1', ...headers },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ...(res.headers.location ? { location: res.headers.location } : {}) }));
        res.on('error', reject);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => reject(new Error(err.code ? `${err.code}: ${err.message}` : err.message)));
    req.end(body);
  });
}
