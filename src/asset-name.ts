// SPEC §2.1's asset-name rule, spelled once: a bare file name of letters, digits, "_" and "-"
// with one extension, at most ASSET_NAME_MAX characters (so no path, no "..", no leading dot,
// no NUL byte). Inline `assets`, the stored library, the output step's attachments and the
// template `asset` filter check names with it; docs, tool descriptions and pages quote
// ASSET_NAME_RULE. Which extensions are assets is the plan table's (ASSET_EXTENSIONS), and
// binary project files (`files`) follow the project's containment rule instead
// (tex/project/paths.ts). Import-free, so that every layer, tex/'s diagnosis too, may use it.

export const ASSET_NAME_MAX = 64;

/** The rule in words, for messages and descriptions. */
export const ASSET_NAME_RULE = `letters, digits, "_" and "-" with one extension, at most ${ASSET_NAME_MAX} characters`;

const STEM = /^[A-Za-z0-9_-]+$/;
const NAME = /^[A-Za-z0-9_-]+\.[A-Za-z0-9]+$/;

/** Why `name` breaks the rule (the first reason found, in words), or null. `limit`: for a name too long. */
export function assetNameProblem(name: string): { why: string; limit?: number } | null {
  if (name.length === 0) return { why: 'the file name is empty.' };
  if (name.includes('\0')) return { why: 'the file name contains a null byte.' };
  if (name.includes('/') || name.includes('\\')) return { why: 'the file name contains a path separator; send a bare file name such as "logo.png".' };
  if (name.includes('..')) return { why: 'the file name contains "..".' };
  if (name.startsWith('.')) return { why: 'the file name starts with a dot.' };
  if (name.length > ASSET_NAME_MAX) return { why: `the file name is ${name.length} characters long; the limit is ${ASSET_NAME_MAX}.`, limit: ASSET_NAME_MAX };
  if (!NAME.test(name)) return { why: 'a file name may hold only letters, digits, "_" and "-", followed by a single extension (e.g. "company-logo.png").' };
  return null;
}

export function isAssetName(name: string): boolean {
  return assetNameProblem(name) === null;
}

/** A name given without its extension, as \includegraphics{logo} or a template's asset "logo" may name logo.png. */
export function isAssetStem(stem: string): boolean {
  return STEM.test(stem) && stem.length <= ASSET_NAME_MAX;
}
