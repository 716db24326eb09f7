// The studio's URL fragment, e.g. #src=<base64url(deflate(utf8 source))>&compiler=xelatex
// or #template=<id>, plus out=<base64url(deflate(JSON))>: the Output panel's settings without
// encryption. Fragments never reach the server, so the source stays in the browser.
import { deflateSync, inflateSync, strFromU8, strToU8, unzlibSync } from 'fflate';

export interface StudioFragment {
  source?: string;
  compiler?: string;
  template?: string;
  /** The compile's `output` minus encryption (output-options.ts shareableOutput). */
  output?: Record<string, unknown>;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/').replace(/\s/g, '');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export function encodeSource(source: string): string {
  return toBase64Url(deflateSync(strToU8(source), { level: 9 }));
}

/** Raw DEFLATE is the format; a zlib-wrapped stream is accepted too. */
export function decodeSource(encoded: string): string {
  const bytes = fromBase64Url(encoded);
  try {
    return strFromU8(inflateSync(bytes));
  } catch {
    return strFromU8(unzlibSync(bytes));
  }
}

export function buildFragment(fragment: StudioFragment): string {
  const parts: string[] = [];
  if (fragment.template) parts.push(`template=${encodeURIComponent(fragment.template)}`);
  if (fragment.source !== undefined) parts.push(`src=${encodeSource(fragment.source)}`);
  if (fragment.compiler) parts.push(`compiler=${encodeURIComponent(fragment.compiler)}`);
  if (fragment.output && Object.keys(fragment.output).length > 0) parts.push(`out=${encodeSource(JSON.stringify(fragment.output))}`);
  return parts.join('&');
}

/** Throws when `src` is present but cannot be decoded. */
export function parseFragment(hash: string): StudioFragment {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const result: StudioFragment = {};
  // URLSearchParams turns '+' into ' '; base64url has neither, but be lenient with base64.
  const src = params.get('src');
  if (src) result.source = decodeSource(src.replace(/ /g, '+'));
  const compiler = params.get('compiler');
  if (compiler) result.compiler = compiler;
  const template = params.get('template');
  if (template) result.template = template;
  const out = params.get('out');
  if (out) {
    // Lenient: a damaged `out` loses the options, not the source the link carries.
    try {
      const parsed: unknown = JSON.parse(decodeSource(out.replace(/ /g, '+')));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) result.output = parsed as Record<string, unknown>;
    } catch {
      // ignored, see above
    }
  }
  return result;
}
