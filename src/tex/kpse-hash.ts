// kpathsea's file database filled in linear time. native/kpse-hash.c, compiled by the build
// (scripts/build-native.mjs), goes beside the inflated formats (formats.ts), and every TeX
// process of a sandbox preloads it (pool.ts), but only once a check on this TeX Live has shown
// that kpathsea answers with it exactly as without it: the same folders for a sample of its
// names, in the same order. Each TeX process then starts about 60 ms of CPU sooner on the
// machines here (docs/performance.md). Without the library, or when the check fails, TeX runs as
// Debian ships it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project-root.js';
import { lsR, texmfRoots } from './diagnosis/texlive.js';
import { imageToolOutput } from './image/tools.js';
import { SANDBOX_FORMATS } from './sandbox.js';

/** The library's name in a formats folder. */
export const KPSE_HASH = 'kpse-hash.so';

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

/**
 * Whether the library in `formatsDir` loads in the sandbox and leaves kpathsea's answers as
 * they are. Any doubt (an error, another answer, no table in the debug output) is a no.
 */
export async function libraryAgrees(formatsDir: string, image: string | undefined): Promise<boolean> {
  try {
    // Tools run in a sandbox exactly when there is an image (image/tools.ts).
    const preload = { LD_PRELOAD: preloadPath(formatsDir, image !== undefined) };
    const maps = await imageToolOutput(['cat', '/proc/self/maps'], { formats: formatsDir, env: preload }, image);
    if (!maps.stdout.includes(KPSE_HASH) || maps.stderr !== '') return false;
    const databases = texmfRoots(image).flatMap((root) => {
      try {
        return [readFileSync(lsR(root, image), 'utf8')];
      } catch {
        return [];
      }
    });
    const names = checkNames(databases);
    const [plain, preloaded] = await Promise.all([lookups(names, {}, formatsDir, image), lookups(names, preload, formatsDir, image)]);
    // Folders found for many names: the comparison compared something.
    return plain === preloaded && plain.split('\n').length > 1000;
  } catch {
    return false;
  }
}
