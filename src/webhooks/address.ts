// Where a webhook may go. Request time: a well-formed https (or, when allowed, http) URL with no
// credentials and no literal forbidden address. Delivery time: every resolved address is checked
// against the forbidden ranges (loopback, private, link-local and metadata, CGNAT, ULA, ...).
import { BlockList, isIP } from 'node:net';
import { errors, type ServiceError } from '../errors.js';

export interface CallbackPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  FORBIDDEN.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible addresses
  ['2001::', 32], // Teredo
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96], // NAT64 can reach IPv4 private space
  ['2001:db8::', 32],
  ['fd00:ec2::254', 128], // AWS metadata over IPv6
] as const) {
  FORBIDDEN.addSubnet(net, prefix, 'ipv6');
}

/** An address a webhook must never reach. IPv4-mapped and -compatible IPv6 are judged as IPv4. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return FORBIDDEN.check(bare, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^(?:0*:)*(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(bare) ?? mappedHex(bare);
  if (mapped) return FORBIDDEN.check(mapped[1]!, 'ipv4');
  return FORBIDDEN.check(bare, 'ipv6');
}

/** `::ffff:7f00:1` (how URL writes a mapped address) as an IPv4 string. */
function mappedHex(address: string): [string, string] | null {
  const m = /^(?:0*:)*ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!m) return null;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return [address, `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`];
}

export function invalidCallback(url: string, reason: string): ServiceError {
  return errors.invalid_callback_url(`callback_url is not allowed: ${reason}.`, { callback_url: url, reason });
}

/** Checks what can be checked without DNS; returns the parsed URL. */
export function checkCallbackUrl(raw: unknown, policy: CallbackPolicy): URL {
  if (typeof raw !== 'string' || raw.length > 2048) throw invalidCallback(String(raw).slice(0, 200), 'it must be a URL string of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidCallback(raw, 'it is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw invalidCallback(raw, policy.allowHttp ? 'it must use https or http' : 'it must use https');
  }
  if (url.username || url.password) throw invalidCallback(raw, 'it must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && isIP(host) && isForbiddenAddress(host)) throw invalidCallback(raw, `${host} is a private, loopback, link-local or reserved address`);
  return url;
}
