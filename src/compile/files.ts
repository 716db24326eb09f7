// `files` of a compile request (an extension of SPEC 1.5.0): the other text files of a
// multi-file project, a map from relative name to UTF-8 text. Names follow the asset name
// rules, with one folder level allowed; only text formats TeX reads are accepted. The bytes
// count toward the plan's source limit together with main.tex (checked by the caller).
import { checkFileNameRules, quoteName } from '../assets/validate.js';
import { errors, type ServiceError, invalidField } from '../errors.js';
import { ASSET_NAME_MAX } from '../quota/plans.js';
import { MAIN } from '../tex/workspace.js';

export const PROJECT_FILE_EXTENSIONS = ['tex', 'bib', 'sty', 'cls', 'bst', 'bbx', 'cbx', 'cfg', 'def', 'csv', 'dat', 'txt'] as const;
/** Files per request: a book's chapters and its bibliographies, with room to spare. */
export const PROJECT_FILES_MAX = 100;

const FOLDER = /^[A-Za-z0-9_-]+$/;

export interface ProjectFiles {
  files: Array<{ name: string; data: Buffer }>;
  bytes: number;
}

function badName(name: string, why: string, details: Record<string, unknown> = {}): ServiceError {
  return errors.invalid_asset_filename(`File ${quoteName(name)}: ${why}`, { file: name, ...details });
}

/** Checks one name: at most one folder, each part under the asset name rules, an allowed extension, not main.*. */
function checkProjectName(name: string): void {
  if (name.startsWith('/')) throw badName(name, 'absolute paths are not allowed; use a name relative to main.tex such as "chapters/intro.tex".');
  const parts = name.split('/');
  if (parts.length > 2) throw badName(name, 'a name may contain one folder level at most (e.g. "chapters/intro.tex").');
  const file = parts.at(-1)!;
  if (parts.length === 2) {
    const folder = parts[0]!;
    if (folder === '..' || folder.startsWith('.')) throw badName(name, 'the folder name starts with a dot or is "..".');
    if (!FOLDER.test(folder) || folder.length > ASSET_NAME_MAX) {
      throw badName(name, `a folder name may hold only letters, digits, "_" and "-" (at most ${ASSET_NAME_MAX} characters).`);
    }
  }
  checkFileNameRules(file, (why, details) => badName(name, why, details));
  const extension = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
  if (!(PROJECT_FILE_EXTENSIONS as readonly string[]).includes(extension)) {
    throw errors.invalid_asset_format(
      `File ${quoteName(name)}: the extension ".${extension}" is not allowed in "files"; use one of ${PROJECT_FILE_EXTENSIONS.map((e) => `.${e}`).join(', ')} (images go in "assets").`,
      { file: name, allowed_extensions: [...PROJECT_FILE_EXTENSIONS] },
    );
  }
  if (parts.length === 1 && file.toLowerCase().startsWith(`${MAIN}.`)) {
    throw badName(name, `"${MAIN}.*" names belong to the document itself (main.tex is the "latex" field); rename the file.`);
  }
}

/** Validates `files` (absent is none) and returns them as workspace files with their total size in bytes. */
export function checkProjectFiles(input: unknown): ProjectFiles {
  if (input === undefined || input === null) return { files: [], bytes: 0 };
  if (typeof input !== 'object' || Array.isArray(input)) throw invalidField('files', 'type', 'must be an object mapping file names to text');
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > PROJECT_FILES_MAX) {
    throw invalidField('files', 'maxProperties', `must have at most ${PROJECT_FILES_MAX} files (got ${entries.length})`);
  }
  const files: ProjectFiles['files'] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const [name, text] of entries) {
    checkProjectName(name);
    // Names differing only in case would collide on a case-insensitive checkout of the project.
    if (seen.has(name.toLowerCase())) throw badName(name, 'another file has the same name (names are compared without case).');
    seen.add(name.toLowerCase());
    if (typeof text !== 'string') throw invalidField(`files.${name}`, 'type', 'must be a string (the file\'s UTF-8 text)');
    const data = Buffer.from(text, 'utf8');
    bytes += data.length;
    files.push({ name, data });
  }
  return { files, bytes };
}
