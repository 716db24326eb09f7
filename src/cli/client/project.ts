// A project folder as `quire compile` sends it: where it is, which file is the document (the
// service's own rule, src/compile/main-file.ts, or --main), and what travels — every file a
// compile can use, none of what it cannot (the service's clutter rule, build output, the PDF
// this command writes, files over the service's limits, .quireignore), zipped as project_zip.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { isClutter } from '../../compile/clutter.js';
import { chooseMainFile } from '../../compile/main-file.js';
import { isIgnored, parseIgnore } from './ignore.js';

/** The service's project_zip limits (src/compile/project-zip.ts; test/cli/project.test.ts keeps them equal). */
export const ZIP_ENTRIES_MAX = 1000;
export const ZIP_ENTRY_BYTES_MAX = 16 * 1024 * 1024;
export const ZIP_TOTAL_BYTES_MAX = 48 * 1024 * 1024;

/** What TeX, latexmk, biber, makeindex and SyncTeX write next to the sources. */
const BUILD_OUTPUT = new Set(
  'aux log out toc lof lot loa lol fls fdb_latexmk synctex synctex.gz xdv dvi bbl blg bcf run.xml idx ind ilg glo gls glg acn acr alg ist nlo nls nav snm vrb brf thm upa upb'.split(' '),
);
/** Formats already compressed: stored as they are rather than deflated again. */
const STORED = new Set(['pdf', 'png', 'jpg', 'jpeg', 'gz', 'zip', 'woff', 'woff2']);

/** A mistake in how the command was called or in the folder it was given: exit 2. */
export class UsageError extends Error {}

export interface Located {
  /** The project folder, absolute. */
  root: string;
  /** The main file, relative to root with "/" separators. */
  main: string;
  /** Where the PDF goes, absolute. */
  output: string;
}

export interface Skipped {
  path: string;
  reason: string;
}

export interface Collected {
  /** Names in the zip → bytes. */
  files: Map<string, Uint8Array>;
  /** The name the main file travels under (main.tex when it must be renamed for the service to pick it). */
  mainName: string;
  skipped: Skipped[];
  bytes: number;
}

const posix = (path: string) => path.split(sep).join('/');

function buildExtension(name: string): string | null {
  const lower = name.toLowerCase();
  for (const ext of BUILD_OUTPUT) if (lower.endsWith(`.${ext}`)) return ext;
  return null;
}

/** Why the project path `rel` is not sent, or null: the rules the watcher also filters events with. */
export function skipReason(located: Located, rel: string, rules: ReturnType<typeof parseIgnore>): string | null {
  if (isClutter(rel)) return 'a dotfile, dot folder or file without an extension (the service skips these)';
  if (isIgnored(rules, rel, false)) return 'matched by .quireignore';
  if (/(?:^|\/)(?:[^/]*~|#[^/]*#)$/.test(rel)) return 'an editor backup';
  const ext = buildExtension(rel);
  if (ext) return `build output (.${ext})`;
  const absolute = join(located.root, rel);
  const stem = located.main.slice(0, -extname(located.main).length);
  if (absolute === located.output || rel.toLowerCase() === `${stem.toLowerCase()}.pdf`) return 'the PDF this command writes';
  return null;
}

export async function readIgnore(root: string): Promise<ReturnType<typeof parseIgnore>> {
  try {
    return parseIgnore(await readFile(join(root, '.quireignore'), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function statOrNull(path: string) {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

/** The project folder, main file and output path for PATH (a .tex file or a folder), --main and -o. */
export async function locate(path: string, options: { main?: string; output?: string }): Promise<Located> {
  const target = resolve(path);
  const info = await statOrNull(target);
  if (!info) throw new UsageError(`${path}: no such file or folder`);
  let root: string;
  let main: string;
  if (info.isFile()) {
    if (!target.toLowerCase().endsWith('.tex')) throw new UsageError(`${path} is not a .tex file or a folder`);
    if (options.main) throw new UsageError('give either a .tex file or a folder with --main, not both');
    root = dirname(target);
    main = basename(target);
  } else if (info.isDirectory()) {
    root = target;
    main = options.main ? await namedMain(root, options.main) : await detectMain(root);
  } else throw new UsageError(`${path} is not a .tex file or a folder`);
  const output = options.output ? resolve(options.output) : join(root, `${main.slice(0, -extname(main).length)}.pdf`);
  return { root, main, output };
}

async function namedMain(root: string, name: string): Promise<string> {
  // Relative to the project folder, or (as a shell completes it) to where the command runs.
  for (const candidate of [resolve(root, name), resolve(name)]) {
    const rel = relative(root, candidate);
    if (rel.startsWith('..') || isAbsolute(rel)) continue;
    if ((await statOrNull(candidate))?.isFile()) {
      if (!rel.toLowerCase().endsWith('.tex')) throw new UsageError(`--main ${name}: the main file must be a .tex file`);
      return posix(rel);
    }
  }
  throw new UsageError(`--main ${name}: no such file in ${root}`);
}

async function detectMain(root: string): Promise<string> {
  const rules = await readIgnore(root);
  const texts: Array<[string, string]> = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.toLowerCase().endsWith('.tex') || isClutter(entry.name) || isIgnored(rules, entry.name, false)) continue;
    texts.push([entry.name, await readFile(join(root, entry.name), 'utf8')]);
  }
  const choice = chooseMainFile(texts);
  if (choice.main !== null) return choice.main;
  if (choice.candidates.length === 0) {
    throw new UsageError(`no main file in ${root}: there is no main.tex and no top-level .tex file with \\documentclass (name one with --main)`);
  }
  throw new UsageError(`${choice.candidates.length} top-level .tex files in ${root} have \\documentclass (${choice.candidates.join(', ')}): name the main one with --main, or call it main.tex`);
}

/** Every file of the project the compile can use, read into memory, and what was left out and why. */
export async function collect(located: Located): Promise<Collected> {
  const rules = await readIgnore(located.root);
  const files = new Map<string, Uint8Array>();
  const skipped: Skipped[] = [];
  let bytes = 0;
  const walk = async (folder: string): Promise<void> => {
    const entries = await readdir(join(located.root, folder), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const rel = folder ? `${folder}/${entry.name}` : entry.name;
      const absolute = join(located.root, rel);
      const info = entry.isSymbolicLink() ? await statOrNull(absolute) : entry;
      if (info?.isDirectory()) {
        if (entry.isSymbolicLink()) skipped.push({ path: `${rel}/`, reason: 'a link to a folder' });
        else if (entry.name.startsWith('.') || entry.name === '__MACOSX') skipped.push({ path: `${rel}/`, reason: 'a dot folder (the service skips these)' });
        else if (isIgnored(rules, rel, true)) skipped.push({ path: `${rel}/`, reason: 'matched by .quireignore' });
        else await walk(rel);
        continue;
      }
      if (!info?.isFile()) {
        skipped.push({ path: rel, reason: 'not a regular file' });
        continue;
      }
      const reason = rel === located.main ? null : skipReason(located, rel, rules);
      if (reason) {
        skipped.push({ path: rel, reason });
        continue;
      }
      const size = (await stat(absolute)).size;
      if (size > ZIP_ENTRY_BYTES_MAX) {
        skipped.push({ path: rel, reason: `${(size / 1048576).toFixed(1)} MiB, over the service's 16 MiB per file` });
        continue;
      }
      bytes += size;
      files.set(rel, await readFile(absolute));
    }
  };
  await walk('');
  if (files.size > ZIP_ENTRIES_MAX) throw new UsageError(`the project has ${files.size} files to send; the service takes at most ${ZIP_ENTRIES_MAX} (list what it does not need in .quireignore)`);
  if (bytes > ZIP_TOTAL_BYTES_MAX) throw new UsageError(`the project has ${(bytes / 1048576).toFixed(1)} MiB to send; the service takes at most 48 MiB (list what it does not need in .quireignore)`);
  const mainName = chooseSentName(located, files, skipped);
  return { files, mainName, skipped, bytes };
}

/**
 * The service takes main.tex, else the single top-level .tex with \documentclass. When that
 * is not the file this command was asked to compile (--main, a .tex PATH), the main file
 * travels as main.tex — the name the service gives it in any case — and a main.tex already
 * at the top stays home.
 */
function chooseSentName(located: Located, files: Map<string, Uint8Array>, skipped: Skipped[]): string {
  const decoder = new TextDecoder();
  const tops = [...files].filter(([name]) => !name.includes('/') && name.toLowerCase().endsWith('.tex')).map(([name, data]) => [name, decoder.decode(data)] as const);
  if (chooseMainFile(tops).main === located.main) return located.main;
  const data = files.get(located.main)!;
  files.delete(located.main);
  if (files.delete('main.tex')) skipped.push({ path: 'main.tex', reason: `${located.main} is the main file; the service would take main.tex instead` });
  files.set('main.tex', data);
  return 'main.tex';
}

export function zipProject(files: Map<string, Uint8Array>): Uint8Array {
  const tree: Zippable = {};
  for (const [name, data] of files) {
    const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
    tree[name] = [data, { level: STORED.has(ext) ? 0 : 6 }];
  }
  return zipSync(tree);
}
