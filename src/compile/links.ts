// Signed PDF links: HMAC-SHA256 over the PDF id and the expiry, so a link works without
// credentials until it expires and cannot be pointed at another PDF or extended.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { errors } from '../errors.js';

function signature(secret: string, id: string, exp: number): string {
  return createHmac('sha256', secret).update(`pdf\n${id}\n${exp}`).digest('base64url');
}

export function signedPdfUrl(baseUrl: string, secret: string, id: string, expiresAt: Date): string {
  const exp = Math.floor(expiresAt.getTime() / 1000);
  return `${baseUrl}/api/v1/pdfs/${id}?exp=${exp}&sig=${signature(secret, id, exp)}`;
}

/** A page image of a compiled PDF (issue 23): signed like the PDF, over `<id>/pages/<page>`, with the same expiry. */
export function signedPageImageUrl(baseUrl: string, secret: string, id: string, page: number, expiresAt: Date): string {
  const exp = Math.floor(expiresAt.getTime() / 1000);
  return `${baseUrl}/api/v1/pdfs/${id}/pages/${page}.png?exp=${exp}&sig=${signature(secret, pageImageId(id, page), exp)}`;
}

/** What a page image's signature covers. */
export const pageImageId = (id: string, page: number) => `${id}/pages/${page}`;

/** Throws invalid_signature for anything but an untampered link, link_expired after `exp`. */
export function verifyPdfLink(secret: string, id: string, exp: unknown, sig: unknown, now: Date): void {
  const expOk = typeof exp === 'string' && /^\d{1,12}$/.test(exp);
  const expected = expOk ? Buffer.from(signature(secret, id, Number(exp))) : Buffer.alloc(0);
  const given = Buffer.from(typeof sig === 'string' ? sig : '');
  if (!expOk || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw errors.invalid_signature('This PDF link is not valid: use the pdf_url exactly as the compile returned it.');
  }
  if (Number(exp) * 1000 <= now.getTime()) {
    throw errors.link_expired('This PDF link has expired; compile the document again for a new link.', {
      expired_at: new Date(Number(exp) * 1000).toISOString(),
    });
  }
}
