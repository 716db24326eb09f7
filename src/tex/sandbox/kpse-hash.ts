// kpathsea's file database filled in linear time. native/kpse-hash.c, compiled by the build
// (scripts/build-native.mjs), goes beside the inflated formats (formats.ts), and the TeX
// engines and bibtex of a sandbox preload it (pool.ts, on their command lines only), but only
// once a check on this TeX Live has shown that no other program or library of the image
// defines or calls the functions it stands in for, and that kpathsea answers with it exactly
// as without it: the same folders for a sample of its names, in the same order. Each TeX
// process then starts about 60 ms of CPU sooner on the machines here (docs/performance.md).
// Without the library, or when the check fails, TeX runs as Debian ships it.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../project-root.js';
import { lsR, texmfRoots } from '../diagnosis/texlive.js';
import { imageToolOutput } from '../image/tools.js';
import { SANDBOX_FORMATS } from './sandbox.js';

/** The library's name in a formats folder. */
export const KPSE_HASH = 'kpse-hash.so';

/**
 * The programs that get the library (pool.ts): libkpathsea's users among the commands a
 * sandbox runs. What they start inherits it (xelatex's output driver, a shell that starts
 * xdvipdfmx); the sweep below covers the whole image, so that is safe too.
 */
export const KPATHSEA_USERS: ReadonlySet<string> = new Set(['pdflatex', 'xelatex', 'lualatex', 'xdvipdfmx', 'bibtex']);

/** What the build compiled, or null when it had no C compiler. */
export function builtLibrary(): string | null {
  const path = join(projectRoot(), 'dist', 'native', KPSE_HASH);
  return existsSync(path) ? path : null;
}

/** LD_PRELOAD for the library in `formatsDir`, as a process sees it: in the sandbox or on the host. */
export function preloadPath(formatsDir: string, isolated: boolean): string {
  return `${isolated ? SANDBOX_FORMATS : formatsDir}/${KPSE_HASH}`;
}

/** Every 50th name of each ls-R, and the names most folders share (whose order the table keeps). */
export function checkNames(databases: readonly string[]): string[] {
  const count = new Map<string, number>();
  const sample = new Set<string>();
  for (const db of databases) {
    let line = 0;
    for (const name of db.split('\n')) {
      if (name === '' || name.endsWith(':') || name.startsWith('%') || name.startsWith('-')) continue;
      count.set(name, (count.get(name) ?? 0) + 1);
      if (++line % 50 === 0) sample.add(name);
    }
  }
  const shared = [...count].filter(([, n]) => n > 2).sort((a, b) => b[1] - a[1]).slice(0, 2000).map(([name]) => name);
  return [...new Set([...sample, ...shared])];
}

/** kpsewhich's answer: every folder of each name, in kpathsea's order, then its warnings. It exits 1 when a name is not found. */
async function lookups(names: readonly string[], env: Record<string, string>, formatsDir: string, image: string | undefined): Promise<string> {
  // No -debug: its table summary is printed between two ls-R files, which makes the library
  // build the rest of the table kpathsea's way, not the way a TeX process has it built.
  const argv = ['kpsewhich', '-all', ...names];
  try {
    const { stdout, stderr } = await imageToolOutput(argv, { formats: formatsDir, env }, image);
    return `${stdout}\n--\n${stderr}`;
  } catch (err) {
    const failed = err as { code?: unknown; stdout?: unknown; stderr?: unknown };
    if (failed.code === 1 && typeof failed.stdout === 'string' && typeof failed.stderr === 'string') return `${failed.stdout}\n--\n${failed.stderr}`;
    throw err;
  }
}

/** The functions a library exports (`nm -D --defined-only`); null without nm. */
async function exported(library: string): Promise<string[] | null> {
  const names: string[] = [];
  const ok = await nm(['--defined-only', library], (_file, type, name) => {
    if (/^[TW]$/.test(type)) names.push(name);
  });
  return ok ? names : null;
}

/** Runs `nm -D -A <args>` and hands each symbol line to `each`; false when nm cannot run. Files that are not ELF are skipped. */
function nm(args: string[], each: (file: string, type: string, name: string) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('nm', ['-D', '-A', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.on('error', () => resolve(false));
    createInterface({ input: child.stdout }).on('line', (line) => {
      // "<file>:<address or blanks> <type> <name>[@version]"
      const match = /^(.+):[0-9a-f ]* ([A-Za-z]) ([^@\s]+)/.exec(line);
      if (match) each(match[1]!, match[2]!, match[3]!);
    });
    child.on('close', () => resolve(true));
  });
}

/** Where the sweep looks for programs and libraries, under the image's root (or the host's). */
const SWEPT = ['usr/bin', 'usr/sbin', 'usr/lib', 'usr/libexec'];
const SHARED_OBJECT = /\.so(\.\d+)*$/;

/**
 * Every program and shared library of the image (or the host) other than libkpathsea whose
 * use of a function of `names` would change under the preload, as "<path>: <name>": a library
 * that defines one (its callers would get the preloaded function instead: a caller binds to
 * the first definition, the preload's), and a file that calls one without being a kpathsea
 * user (it expects someone else's). A kpathsea user that calls them (xdvi does) gets exactly
 * kpathsea's answers, which is what the library is checked for; a program's own definition
 * still wins over the preload (bash has a hash_insert). Null when the sweep could not be made
 * (no nm): a doubt, so no library.
 */
export async function symbolClashes(names: readonly string[], image: string | undefined): Promise<string[] | null> {
  const wanted = new Set(names);
  const files: string[] = [];
  for (const folder of SWEPT) {
    const entries = await readdir(join(image ?? '/', folder), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const program = folder.endsWith('bin') && entry.parentPath === join(image ?? '/', folder);
      if (program || SHARED_OBJECT.test(entry.name)) files.push(join(entry.parentPath, entry.name));
    }
  }
  const clashes: string[] = [];
  for (let i = 0; i < files.length; i += 500) {
    const uses = new Map<string, { calls: string[]; defines: string[]; kpathsea: boolean }>();
    const ok = await nm(files.slice(i, i + 500), (file, type, name) => {
      const kpathsea = type === 'U' && /^kpse_|^kpathsea_/.test(name);
      if (!wanted.has(name) && !kpathsea) return;
      const use = uses.get(file) ?? { calls: [], defines: [], kpathsea: false };
      uses.set(file, use);
      if (kpathsea) use.kpathsea = true;
      else (type === 'U' ? use.calls : use.defines).push(name);
    });
    if (!ok) return null;
    for (const [file, use] of uses) {
      if (basename(file).startsWith('libkpathsea.so')) continue;
      const library = SHARED_OBJECT.test(file);
      const changed = [...(library ? use.defines : []), ...(use.kpathsea ? [] : use.calls)];
      for (const name of changed.sort()) clashes.push(`${image !== undefined ? file.slice(image.length) : file}: ${name}`);
    }
  }
  return clashes;
}

/**
 * Whether the library in `formatsDir` may be preloaded: no program or library of the image
 * clashes with its functions (symbolClashes), it loads in the sandbox, and it leaves
 * kpathsea's answers as they are. Any doubt (an error, another answer, no table in the debug
 * output) is a no; `why` hears the reason.
 */
export async function libraryAgrees(formatsDir: string, image: string | undefined, why: (reason: string) => void = () => {}): Promise<boolean> {
  try {
    const names = await exported(join(formatsDir, KPSE_HASH));
    if (names === null || names.length === 0) {
      why('nm (binutils) could not list its functions');
      return false;
    }
    const clashes = await symbolClashes(names, image);
    if (clashes === null || clashes.length > 0) {
      why(clashes === null ? 'nm (binutils) could not sweep the image' : `other programs or libraries define or call its functions: ${clashes.slice(0, 5).join(', ')}`);
      return false;
    }
    // Tools run in a sandbox exactly when there is an image (image/tools.ts).
    const preload = { LD_PRELOAD: preloadPath(formatsDir, image !== undefined) };
    const maps = await imageToolOutput(['cat', '/proc/self/maps'], { formats: formatsDir, env: preload }, image);
    if (!maps.stdout.includes(KPSE_HASH) || maps.stderr !== '') {
      why('it does not load in the sandbox');
      return false;
    }
    const databases = texmfRoots(image).flatMap((root) => {
      try {
        return [readFileSync(lsR(root, image), 'utf8')];
      } catch {
        return [];
      }
    });
    const sample = checkNames(databases);
    const [plain, preloaded] = await Promise.all([lookups(sample, {}, formatsDir, image), lookups(sample, preload, formatsDir, image)]);
    // Folders found for many names: the comparison compared something.
    if (plain === preloaded && plain.split('\n').length > 1000) return true;
    why('kpathsea answers otherwise with it');
    return false;
  } catch (err) {
    why(`the check failed: ${(err as Error).message.split('\n')[0]}`);
    return false;
  }
}
