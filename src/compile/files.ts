// `files` of a compile request (an extension of SPEC 1.5.0): the other files of a multi-file
// project, a map from relative path to either UTF-8 text or `{"base64": "…"}` for a binary
// file of an asset type (figures/plot.png, fonts/Brand.otf). A path obeys the project's
// containment rule (tex/project/paths.ts), not SPEC's asset name rule: main.bib,
// chap.01.intro.tex and plot.v2.pdf are the author's names. Text is refused by content (a NUL
// character means binary), not by extension: TeX projects use dozens of text extensions
// (.lco, .ldf, .tikz, .bbx, .ist, …). Text counts toward the plan's source limit with
// main.tex (checked by the caller); binary files are validated and counted as assets by the
// asset resolver. What a compile has no use for (LICENSE, latexmkrc, dotfiles) is skipped, as
// in a project_zip (clutter.ts).
import { formatOfName, quoteName } from '../assets/validate.js';
import { errors, type ServiceError, invalidField } from '../errors.js';
import { isJobOwnPath, jobOwnReason, pathProblem, sameFileKey } from '../tex/project/paths.js';
import { isClutter } from './clutter.js';

/** Files per request: a book's chapters and its bibliographies, with room to spare. */
export const PROJECT_FILES_MAX = 200;

export interface ProjectFiles {
  files: Array<{ name: string; data: Buffer }>;
  /** Binary files (asset types) with their base64 text, for the asset resolver. */
  binary: Array<{ name: string; base64: unknown }>;
  bytes: number;
  /** Paths skipped as clutter (LICENSE, latexmkrc, .gitignore: clutter.ts). */
  skipped: string[];
}

function badName(name: string, why: string, details: Record<string, unknown> = {}): ServiceError {
  return errors.invalid_asset_filename(`File ${quoteName(name)}: ${why}`, { file: name, ...details });
}

function notText(name: string, why: string): ServiceError {
  return errors.invalid_asset_format(`File ${quoteName(name)}: ${why}`, { file: name });
}

function isBinaryValue(value: unknown): value is { base64: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && 'base64' in value;
}

/** Validates `files` (absent is none) and returns text files with their total size, and the binary ones. */
export function checkProjectFiles(input: unknown): ProjectFiles {
  if (input === undefined || input === null) return { files: [], binary: [], bytes: 0, skipped: [] };
  if (typeof input !== 'object' || Array.isArray(input)) throw invalidField('files', 'type', 'must be an object mapping file paths to text or {"base64": "…"}');
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > PROJECT_FILES_MAX) {
    throw invalidField('files', 'maxProperties', `must have at most ${PROJECT_FILES_MAX} files (got ${entries.length})`);
  }
  const result: ProjectFiles = { files: [], binary: [], bytes: 0, skipped: [] };
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const problem = pathProblem(name);
    if (problem) throw badName(name, problem.why, problem.limit !== undefined ? { limit: problem.limit } : {});
    if (isClutter(name)) {
      result.skipped.push(name);
      continue;
    }
    if (isJobOwnPath(name)) throw badName(name, jobOwnReason(name), { reason: 'reserved' });
    // Names differing only in case would collide on a case-insensitive checkout of the project.
    if (seen.has(sameFileKey(name))) throw badName(name, 'another file has the same name (names are compared without case).');
    seen.add(sameFileKey(name));
    const format = formatOfName(name);
    if (isBinaryValue(value)) {
      if (!format) {
        throw notText(name, 'only files of the asset types (png, jpg, pdf, svg, eps, ps, otf, ttf, ttc) may be sent as {"base64": "…"}; send text as a string.');
      }
      result.binary.push({ name, base64: value.base64 });
      continue;
    }
    if (typeof value !== 'string') throw invalidField(`files.${name}`, 'type', 'must be a string (the file\'s UTF-8 text) or {"base64": "…"} for a binary file');
    // SVG and EPS are text, but they are figures: converted like assets, so they go as base64.
    if (format) throw notText(name, `a ${name.slice(name.lastIndexOf('.') + 1)} file is sent as {"base64": "…"} (it is converted or checked like an asset).`);
    if (value.includes('\0')) throw notText(name, 'the text contains a NUL character, so it is binary; only the asset types may be binary.');
    const data = Buffer.from(value, 'utf8');
    result.bytes += data.length;
    result.files.push({ name, data });
  }
  return result;
}
