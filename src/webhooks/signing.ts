// Standard Webhooks signing: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the
// base64 part of the account's `whsec_…` secret.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** True when one of the space-separated signatures in the header matches (receivers' side). */
export function verifyWebhook(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
