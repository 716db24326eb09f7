// The asset rules of SPEC §2.1, shared by inline compile assets, binary project files and the
// stored library: a safe file name (SPEC's for an asset, the project's containment rule for a
// binary project file such as figures/plot.v2.pdf), an allowed extension,
// strict base64, and bytes that really are the format the extension claims (a renamed file
// is refused; a font must also have a sound sfnt table directory).
import { errors, type ServiceError } from '../errors.js';
import { assetNameProblem } from '../asset-name.js';
import { BASE64_RULE, decodeCompact, readBase64 } from '../base64.js';
import { ASSET_EXTENSIONS } from '../quota/plans.js';
import { isJobOwnPath, jobOwnReason, pathProblem } from '../tex/project/paths.js';
import { MAIN } from '../tex/sandbox/workspace.js';
import { checkFont, FONT_LABEL } from './font.js';
import { checkSvg } from './svg.js';

export type AssetFormat = 'png' | 'jpeg' | 'pdf' | 'svg' | 'postscript' | 'otf' | 'ttf' | 'ttc';

const FORMAT_OF_EXTENSION: Record<(typeof ASSET_EXTENSIONS)[number], AssetFormat> = {
  png: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  pdf: 'pdf',
  svg: 'svg',
  eps: 'postscript',
  ps: 'postscript',
  otf: 'otf',
  ttf: 'ttf',
  ttc: 'ttc',
};

export const CONTENT_TYPES: Record<AssetFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  pdf: 'application/pdf',
  svg: 'image/svg+xml',
  postscript: 'application/postscript',
  otf: 'font/otf',
  ttf: 'font/ttf',
  ttc: 'font/collection',
};

/** The asset format a file name's extension stands for, or null (any case). */
export function formatOfName(name: string): AssetFormat | null {
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return FORMAT_OF_EXTENSION[name.slice(dot + 1).toLowerCase() as keyof typeof FORMAT_OF_EXTENSION] ?? null;
}

/** Shows a hostile name safely inside a message (control characters escaped, length capped). */
export function quoteName(name: string): string {
  const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return JSON.stringify(shown);
}

function badName(name: string, why: string, details: Record<string, unknown> = {}): ServiceError {
  return errors.invalid_asset_filename(`Asset ${quoteName(name)}: ${why}`, { asset: name, ...details });
}

/**
 * SPEC §2.1's name rule of an asset (and an attachment of the output step): asset-name.ts.
 * `fail` builds the caller's error.
 */
export function checkFileNameRules(name: string, fail: (why: string, details?: Record<string, unknown>) => ServiceError): void {
  const problem = assetNameProblem(name);
  if (problem) throw problem.limit !== undefined ? fail(problem.why, { limit: problem.limit }) : fail(problem.why);
}

/** The format a file's extension stands for, or invalid_asset_format naming the allowed ones. */
function formatOrRefuse(name: string): AssetFormat {
  const format = formatOfName(name);
  if (format) return format;
  const extension = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  throw errors.invalid_asset_format(
    `Asset ${quoteName(name)}: the extension ".${extension}" is not allowed; use one of ${ASSET_EXTENSIONS.map((e) => `.${e}`).join(', ')}.`,
    { asset: name, allowed_extensions: [...ASSET_EXTENSIONS] },
  );
}

/** Checks SPEC's name rules of an asset and returns the format its extension stands for. */
export function checkName(name: string): AssetFormat {
  checkFileNameRules(name, (why, details) => badName(name, why, details));
  if (name.toLowerCase() === `${MAIN}.pdf`) {
    throw badName(name, `"${MAIN}.pdf" is the name of the compiled document itself; rename the asset.`);
  }
  return formatOrRefuse(name);
}

/**
 * A binary project file (figures/plot.v2.pdf): the project's containment rule, not SPEC's
 * asset name rule (tex/project/paths.ts), and an asset type. Returns the format.
 */
export function checkProjectBinaryName(path: string): AssetFormat {
  const problem = pathProblem(path);
  if (problem) throw badName(path, problem.why, problem.limit !== undefined ? { limit: problem.limit } : {});
  if (isJobOwnPath(path)) throw badName(path, jobOwnReason(path), { reason: 'reserved' });
  return formatOrRefuse(path);
}

function badEncoding(name: string, why: string): ServiceError {
  return errors.invalid_asset_encoding(`Asset ${quoteName(name)}: ${why}`, { asset: name });
}

/** Strict base64 (standard alphabet; padding optional; line breaks allowed) to bytes. */
export function decodeBase64(name: string, value: unknown): Buffer {
  if (typeof value !== 'string') {
    throw badEncoding(name, `the content must be a base64 string, got ${value === null ? 'null' : typeof value}.`);
  }
  if (/^\s*data:/i.test(value)) {
    throw badEncoding(name, 'send the bare base64 of the file, without a "data:...;base64," prefix.');
  }
  const reading = readBase64(value);
  if (!reading.ok) throw badEncoding(name, `the content is ${BASE64_RULE}.`);
  const data = decodeCompact(reading.compact);
  if (!data) throw badEncoding(name, 'the content is not valid base64 (it does not decode cleanly).');
  if (data.length === 0) throw badEncoding(name, 'the content decodes to zero bytes.');
  return data;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format the bytes really are, judged by their leading (magic) bytes. */
export function sniff(data: Buffer): AssetFormat | null {
  if (data.length >= 16 && data.subarray(0, 8).equals(PNG_SIGNATURE) && data.toString('latin1', 12, 16) === 'IHDR') {
    return 'png';
  }
  if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg';
  if (data.toString('latin1', 0, 5) === '%PDF-') return 'pdf';
  if (looksLikeXml(data) && /<([A-Za-z_][\w.-]*:)?svg[\s>/]/.test(data.toString('utf8', 0, 4096))) return 'svg';
  // PostScript text ("%!PS-Adobe-3.0 EPSF-3.0", "%!PS"), or a DOS EPS binary header.
  if (data.toString('latin1', 0, 2) === '%!' || (data.length >= 4 && data.readUInt32BE(0) === 0xc5d0d3c6)) return 'postscript';
  const tag = data.toString('latin1', 0, 4);
  if (tag === 'OTTO') return 'otf';
  if (tag === 'true' || (data.length >= 4 && data.readUInt32BE(0) === 0x00010000)) return 'ttf';
  if (tag === 'ttcf') return 'ttc';
  return null;
}

function looksLikeXml(data: Buffer): boolean {
  return data.toString('utf8', 0, Math.min(data.length, 64)).replace(/^\uFEFF/, '').trimStart().startsWith('<');
}

const FORMAT_LABEL: Record<AssetFormat, string> = { png: 'PNG', jpeg: 'JPEG', pdf: 'PDF', svg: 'SVG', postscript: 'PostScript', ...FONT_LABEL };

/** OpenType outlines in a .ttf or TrueType ones in a .otf are both fonts: engines read either. */
function sameKind(format: AssetFormat, actual: AssetFormat | null): boolean {
  return actual === format || (actual !== null && format in FONT_LABEL && actual in FONT_LABEL && actual !== 'ttc' && format !== 'ttc');
}

/** Refuses bytes that are not what the extension says; SVG must also pass the XML check. */
export function checkContent(name: string, format: AssetFormat, data: Buffer): void {
  const actual = sniff(data);
  // Text that merely starts like XML gets the precise reason from the SVG check below.
  if (!sameKind(format, actual) && !(format === 'svg' && actual === null && looksLikeXml(data))) {
    const seen = actual ? `${FORMAT_LABEL[actual]} data` : 'data of no allowed format';
    throw errors.invalid_asset_format(
      `Asset ${quoteName(name)}: the name says ${FORMAT_LABEL[format]} but the content is ${seen}; the file may have been renamed.`,
      { asset: name, expected_format: format, detected_format: actual },
    );
  }
  if (format === 'svg') sanitisedSvg(name, data);
  if (format in FONT_LABEL) {
    const problem = checkFont(data);
    if (problem) {
      throw errors.invalid_asset_format(`Asset ${quoteName(name)}: the font does not parse (${problem}).`, { asset: name, expected_format: format });
    }
  }
}

/** The SVG text to hand the converter (DOCTYPE removed), or invalid_asset_format naming why. */
export function sanitisedSvg(name: string, data: Buffer): string {
  const result = checkSvg(data);
  if (!result.ok) {
    throw errors.invalid_asset_format(`Asset ${quoteName(name)}: ${result.reason}`, {
      asset: name,
      expected_format: 'svg',
    });
  }
  return result.sanitised;
}

/** Name, encoding and content in one go: the decoded bytes. */
export function validateAsset(name: string, base64: unknown): { format: AssetFormat; data: Buffer } {
  const format = checkName(name);
  const data = decodeBase64(name, base64);
  checkContent(name, format, data);
  return { format, data };
}
