// TeX Live stores each engine's format gzip-compressed, and inflating it is most of a small
// run: pdflatex spends about 85 of its 126 ms on a one-pager inflating a 21 MB format. The
// engines read a format through zlib's gzread, which passes an uncompressed file through
// unchanged, so the same format stored inflated loads with the same result (byte-identical
// PDFs, tested) at a third of the CPU. It is inflated once per TeX Live installation into a
// folder every sandbox mounts read-only; a TeX Live update (another format file) gets a new one.
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { COMPILERS, type Compiler } from '../compilers.js';
import { CORE_MAP, FontMaps } from './font-map.js';
import { hostPath, imageTool } from '../image/tools.js';
import { builtLibrary, KPSE_HASH, libraryAgrees } from '../sandbox/kpse-hash.js';
import { processTag, startTime } from '../sandbox/sweep.js';

/** The engine kpathsea looks formats up for (TeX Live 2022: lualatex runs on luahbtex). */
const ENGINE: Record<Compiler, string> = { pdflatex: 'pdftex', xelatex: 'xetex', lualatex: 'luahbtex' };

/** The installed (compressed) format of each compiler on the host, or null when kpathsea does not know it. */
async function installed(compiler: Compiler, image: string | undefined): Promise<string | null> {
  return found(['kpsewhich', `-engine=${ENGINE[compiler]}`, `${compiler}.fmt`], image);
}

/** The host path of the file kpathsea finds with `argv` in the image, or null. */
async function found(argv: string[], image: string | undefined): Promise<string | null> {
  const path = (await imageTool(argv, image).catch(() => '')).trim();
  return path ? hostPath(path, image) : null;
}

/**
 * Prepares `<root>/formats-<id>` holding `<compiler>.fmt` inflated for each compiler TeX Live
 * has, building it first when missing; `id` follows the installed files (path, size, mtime),
 * so an update of TeX Live makes a new folder (older ones are removed). Safe when several
 * processes race: whoever renames first wins.
 */
export interface Formats {
  /** The folder on the host. */
  dir: string;
  compilers: ReadonlySet<Compiler>;
  /** pdftex.map split into its core (the folder's CORE_MAP) and the rest, when TeX Live has one (font-map.ts). */
  fontMaps?: FontMaps;
  /** The folder holds KPSE_HASH, checked on this TeX Live: TeX processes preload it (kpse-hash.ts). */
  kpseHash: boolean;
}

/** `image`: the TeX image whose formats these are (none: the host's TeX Live). */
export async function prepareFormats(root: string, image: string | undefined): Promise<Formats> {
  const sources = new Map<Compiler, string>();
  const id = createHash('sha256');
  for (const compiler of COMPILERS) {
    const path = await installed(compiler, image);
    if (!path) continue;
    const stats = await stat(path);
    sources.set(compiler, path);
    id.update(`${compiler}\0${path}\0${stats.size}\0${stats.mtimeMs}\0${stats.ino}\n`);
  }
  const mapPath = sources.has('pdflatex') ? await found(['kpsewhich', '-progname=pdflatex', 'pdftex.map'], image) : null;
  const map = mapPath ? await readFile(mapPath, 'utf8').catch(() => null) : null;
  if (map !== null) id.update(`pdftex.map\0${createHash('sha256').update(map).digest('hex')}\n`);
  const library = builtLibrary();
  const libraryBytes = library !== null ? await readFile(library).catch(() => null) : null;
  if (libraryBytes !== null) id.update(`${KPSE_HASH}\0${createHash('sha256').update(libraryBytes).digest('hex')}\n`);
  const name = `formats-${id.digest('hex').slice(0, 16)}`;
  const target = join(root, name);
  const fontMaps = map !== null ? FontMaps.split(map) : undefined;
  const formats = async (): Promise<Formats> => ({
    dir: target,
    compilers: new Set(sources.keys()),
    ...(fontMaps && fontMaps.coreSize > 0 ? { fontMaps } : {}),
    kpseHash: await sameLibrary(join(target, KPSE_HASH), libraryBytes),
  });
  // Traversable (0755): job uids reach the formats through it.
  await mkdir(root, { recursive: true });
  // Said before the folder is looked for: from here on no other process removes it (see removeUnused).
  await markUse(root, name);
  if (existsSync(join(target, '.ready'))) return formats();

  const work = await mkdtemp(join(root, 'formats-build-'));
  try {
    for (const [compiler, path] of sources) {
      await pipeline(createReadStream(path), createGunzip(), createWriteStream(join(work, `${compiler}.fmt`), { mode: 0o644 }));
    }
    if (fontMaps && fontMaps.coreSize > 0) await writeFile(join(work, CORE_MAP), fontMaps.core, { mode: 0o644 });
    await chmod(work, 0o755);
    if (libraryBytes !== null) {
      await writeFile(join(work, KPSE_HASH), libraryBytes, { mode: 0o755 });
      let why = '';
      if (!(await libraryAgrees(work, image, (reason) => (why = reason)))) {
        await rm(join(work, KPSE_HASH));
        console.warn(`quire: ${KPSE_HASH} is not used on this TeX Live (${why}); TeX runs without it`);
      }
    }
    await writeFile(join(work, '.ready'), [...sources].map(([c, p]) => `${c} ${p}`).join('\n') + '\n');
    await rename(work, target).catch((err: NodeJS.ErrnoException) => {
      if (!['EEXIST', 'ENOTEMPTY'].includes(err.code ?? '')) throw err;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  // Formats of an earlier TeX Live, or of another build of the library, that no live process uses.
  for (const old of await readdir(root).catch(() => [])) {
    if (/^formats-[0-9a-f]{16}$/.test(old) && old !== name) await removeUnused(root, old).catch(() => {});
  }
  return formats();
}

/**
 * Where the processes that use a formats folder say so: `<folder>.<process tag>`, an empty
 * file per process (sweep.ts's tag: pid and start time, so a dead process's mark is told from
 * a live one's). A folder another process still mounts into its sandboxes must stay: two
 * builds of the service on one host (another checkout, a rolling upgrade; one with the
 * library, one without) name their folders differently, and each start once removed the
 * other's, so that every later sandbox of the other failed to start ("sandbox exited (1):
 * bwrap: Can't find source path …/formats-…").
 */
const USERS = '.formats-in-use';

async function markUse(root: string, name: string): Promise<void> {
  await mkdir(join(root, USERS), { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await writeFile(join(root, USERS, `${name}.${processTag()}`), '');
  // Every process start leaves a mark: those of ended processes go.
  await liveUses(root);
}

/** The folders live processes have marked as used; the marks of ended processes are removed. */
async function liveUses(root: string): Promise<Set<string>> {
  const used = new Set<string>();
  for (const mark of await readdir(join(root, USERS)).catch(() => [])) {
    const owner = /^(.+)\.p(\d+)-(\d+)$/.exec(mark);
    if (owner && (await startTime(Number(owner[2]))) === owner[3]) used.add(owner[1]!);
    else await rm(join(root, USERS, mark), { force: true });
  }
  return used;
}

/**
 * Removes the formats folder `name` unless a live process uses it. A process marks its use
 * before it looks for the folder; the folder is first renamed away, then the marks are read
 * again: one that came meanwhile gets its folder back (or one it built itself, having found
 * none), and one that comes later finds no folder and builds it.
 */
async function removeUnused(root: string, name: string): Promise<void> {
  if ((await liveUses(root)).has(name)) return;
  const away = join(root, `.formats-old-${randomUUID()}`);
  await rename(join(root, name), away);
  if ((await liveUses(root)).has(name)) await rename(away, join(root, name)).catch(() => {});
  await rm(away, { recursive: true, force: true });
}

/**
 * Whether the library in a formats folder is the one this build compiled, byte for byte. A
 * folder is reused by its name alone, and the name is only a hash of what it should hold:
 * a library planted in it, or left by another build, is not loaded. None built: none loaded.
 */
async function sameLibrary(path: string, built: Buffer | null): Promise<boolean> {
  if (built === null) return false;
  const found = await readFile(path).catch(() => null);
  if (found === null) return false;
  if (found.equals(built)) return true;
  console.warn(`quire: ${path} is not the library this build compiled; TeX runs without it`);
  return false;
}
