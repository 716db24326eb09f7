// Base64 as every request field reads it, spelled once: the standard alphabet, "=" padding
// optional, spaces and line breaks allowed, and nothing Node's decoder would silently drop.
// Reading and decoding are two steps so that a field's owner can refuse an oversized value from
// its length alone, before a byte is allocated; each owner maps a refusal to its own catalogue
// code (an asset, an attachment, a PKCS#12, a PDF to check). Import-free, for every layer.

const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;
const WHITESPACE = /[ \t\r\n]+/g;

/** What a reading refuses, in words that fit after "the content is …". */
export const BASE64_RULE = 'not valid base64 (standard alphabet A-Z a-z 0-9 + /, "=" padding)';

export type Base64Reading = { ok: true; compact: string; bytes: number } | { ok: false };

/** `text` without its whitespace and the number of bytes it decodes to, or a refusal. */
export function readBase64(text: string): Base64Reading {
  const compact = text.replace(WHITESPACE, '');
  // A length of 4k+1 cannot be base64; padding only ever completes a group of four.
  if (!ALPHABET.test(compact) || compact.length % 4 === 1 || (compact.includes('=') && compact.length % 4 !== 0)) return { ok: false };
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return { ok: true, compact, bytes: Math.floor(((compact.length - padding) * 3) / 4) };
}

/**
 * The bytes of a reading's compact text, or undefined when the text is not canonical: Node
 * ignores stray trailing bits ("QR==" decodes as "QQ=="), and a round trip proves none were.
 */
export function decodeCompact(compact: string): Buffer | undefined {
  const data = Buffer.from(compact, 'base64');
  return data.toString('base64').replace(/=+$/, '') === compact.replace(/=+$/, '') ? data : undefined;
}
