// The one name rule of a project's own files (`files`, `project_zip` entries, their binary
// files at the asset resolver, and the runner's last check before it writes them): the path
// stays inside the project (relative, "/" between parts, no "..", no NUL, no control
// characters, bounded length and depth) and is not a file the service writes for the job.
// Anything else is the author's: several dots, spaces and accents are names TeX reads as
// latexmk does (chap.01.intro.tex, plot.v2.pdf, main.bib). SPEC's stricter rule is for
// `assets` only (assets/validate.ts).
import { PAUSED_DRIVER, PAUSED_PREAMBLE } from '../caches/paused.js';
import { MAIN } from '../sandbox/workspace.js';

/**
 * Folders a project path may hold. Real projects go deeper than chapters/part1/intro.tex: a
 * local texmf tree (texmf/tex/latex/pkg/preset/x.def is five) as latexmk reads it; sixteen keeps
 * every one seen while a path stays bounded (with PATH_BYTES_MAX).
 */
export const PATH_FOLDERS_MAX = 16;
/** Bytes of one part of a path: a Linux file name. */
export const PATH_PART_BYTES_MAX = 255;
/** Bytes of a whole path: far below Linux's PATH_MAX (4096) once under the job's workspace. */
export const PATH_BYTES_MAX = 1024;

/**
 * Folder of the output step's attachments in the job's workspace, under the job's name (main.*
 * belongs to the job) and reserved in JOB_OWN_FOLDERS: no caller file is ever written there.
 */
export const ATTACHMENT_DIR = `${MAIN}.attachments`;

/**
 * What the service writes into every job's workspace under the job's name, and reads back as
 * its result: a project file under one of these names would be overwritten or taken for the
 * result. Other `main.*` names (main.bib, main.xmpdata, main-blx.bib, a precompiled main.bbl)
 * are the project's own. Compared without case (an archive made on macOS).
 */
export const JOB_OWN_FILES: readonly string[] = ['tex', 'pdf', 'log', 'aux', 'fls', 'xdv', 'synctex.gz']
  .map((ext) => `${MAIN}.${ext}`)
  .concat(['preview.pdf', PAUSED_PREAMBLE, PAUSED_DRIVER]);
/** Folders the service fills for the job (the output step's attachments). */
export const JOB_OWN_FOLDERS: readonly string[] = [ATTACHMENT_DIR];
/** The file the output step writes for a PDF standard (pdfx reads it by the job's name). */
export const XMPDATA_FILE = `${MAIN}.xmpdata`;

/** C0/C1 controls and DEL, lone surrogates (no file name), line and paragraph separators, and the bidirectional overrides that make a name read as another. */
const CONTROL = /[\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** Why `path` is not a name inside the project, or null. `limit` is the bound it passed. */
export function pathProblem(path: string): { why: string; limit?: number } | null {
  if (path.length === 0) return { why: 'the name is empty.' };
  if (path.includes('\0')) return { why: 'the name contains a null byte.' };
  if (CONTROL.test(path)) return { why: 'the name contains a control character (or is not valid Unicode).' };
  if (path.includes('\\')) return { why: 'the name contains a backslash; separate folders with "/" (e.g. "figures/plot.png").' };
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return { why: 'absolute paths are not allowed; use a path relative to main.tex such as "chapters/intro.tex".' };
  const parts = path.split('/');
  if (parts.some((part) => part === '..' || part === '.' || part === '')) return { why: 'a part of the path is "..", "." or empty.' };
  if (parts.length - 1 > PATH_FOLDERS_MAX) {
    return { why: `the path is ${parts.length - 1} folders deep; the limit is ${PATH_FOLDERS_MAX}.`, limit: PATH_FOLDERS_MAX };
  }
  if (Buffer.byteLength(path) > PATH_BYTES_MAX) return { why: `the path is ${Buffer.byteLength(path)} bytes long; the limit is ${PATH_BYTES_MAX}.`, limit: PATH_BYTES_MAX };
  const long = parts.find((part) => Buffer.byteLength(part) > PATH_PART_BYTES_MAX);
  if (long !== undefined) return { why: `a part of the path is ${Buffer.byteLength(long)} bytes long; the limit is ${PATH_PART_BYTES_MAX}.`, limit: PATH_PART_BYTES_MAX };
  return null;
}

/** Whether `path` is one the service writes for the job (`xmpdata`: the job asked for a PDF standard). */
export function isJobOwnPath(path: string, options: { xmpdata?: boolean } = {}): boolean {
  const lower = path.toLowerCase();
  if (JOB_OWN_FILES.includes(lower) || (options.xmpdata === true && lower === XMPDATA_FILE)) return true;
  return JOB_OWN_FOLDERS.some((folder) => lower === folder || lower.startsWith(`${folder}/`));
}

/** A message for a project file under a name the service writes for the job. */
export function jobOwnReason(path: string): string {
  if (path.toLowerCase() === `${MAIN}.tex`) return `"${MAIN}.tex" is the document itself (the "latex" field); rename the file.`;
  return `the service writes "${path.split('/')[0]}" for the job itself (${[...JOB_OWN_FILES, ...JOB_OWN_FOLDERS.map((f) => `${f}/`)].join(', ')}); rename the file.`;
}

/** The key two names that would be one file on a case-insensitive checkout share. */
export function sameFileKey(path: string): string {
  return path.normalize('NFC').toLowerCase();
}
