// Where the installed TeX Live keeps its LaTeX files: the trees kpathsea searches and their
// ls-R databases, read directly (one kpsewhich call, no per-file lookups). The fingerprint
// changes whenever a package is installed or removed, because mktexlsr rewrites ls-R then.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defaultImageRoot } from '../image/default.js';
import { hostPath, imageToolSync } from '../image/tools.js';

/** Subtrees of tex/ whose files LaTeX can load (latex-dev is the pre-release kernel: not used). */
const LATEX_TREES = /^tex\/(latex|generic|lualatex|xelatex|luatex|xetex)(\/|$)/;
/** Directories of the LaTeX core and the required collection (amsmath, tools, graphics, babel, …). */
const CORE_DIRS = /^tex\/(latex\/(base|amsmath|amsfonts|amscls|tools|graphics|graphics-cfg|psnfss|l3kernel|l3packages|hyperref|xcolor|geometry|cyrillic)|generic\/babel)(\/|$)/;

export interface TexFile {
  path: string;
  /** In the LaTeX core or a required package. */
  core: boolean;
}

/**
 * The texmf trees of this installation, main distribution first, as host paths: inside the
 * TeX image (image/tools.ts) when there is one, else the host's.
 */
export function texmfRoots(image = defaultImageRoot()): string[] {
  let roots: string[];
  try {
    // The trees that have an ls-R database, in kpathsea's search order.
    const out = imageToolSync(['kpsewhich', '-expand-braces=$TEXMFDBS'], image);
    roots = out.trim().split(':').map((r) => r.replace(/^!!/, '')).filter((r) => r.startsWith('/'));
    if (roots.length === 0) throw new Error('no texmf trees');
  } catch {
    roots = ['/usr/share/texlive/texmf-dist', '/usr/share/texmf', '/usr/local/share/texmf'];
  }
  return [...new Set(roots.map((root) => hostPath(root, image)))];
}

/**
 * A tree's ls-R database on the host. Debian links it to /var/lib/texmf/ls-R-*, an absolute
 * link that means the image's file, never the host's file of that name.
 */
export function lsR(root: string, image = defaultImageRoot()): string {
  if (image === undefined || !root.startsWith(`${image}/`)) return join(root, 'ls-R');
  return hostPath(join(root.slice(image.length), 'ls-R'), image);
}

/** Every LaTeX-loadable file by its name; the first tree that has a name wins, as in kpathsea. */
export function listTexFiles(roots: readonly string[]): Map<string, TexFile> {
  const files = new Map<string, TexFile>();
  for (const root of roots) {
    let db: string;
    try {
      db = readFileSync(lsR(root), 'utf8');
    } catch {
      continue;
    }
    let dir: string | null = null;
    for (const line of db.split('\n')) {
      if (line.endsWith(':')) {
        const rel = line.slice(0, -1).replace(/^\.\/?/, '');
        dir = LATEX_TREES.test(rel) ? rel : null;
        continue;
      }
      if (dir === null || line === '' || !line.includes('.')) continue;
      if (!files.has(line)) files.set(line, { path: join(root, dir, line), core: CORE_DIRS.test(dir) });
    }
  }
  return files;
}

/** Changes when any ls-R database changes (size or time), or when the extractor does. */
export function fingerprint(roots: readonly string[], extractorVersion: number): string {
  const hash = createHash('sha256').update(`v${extractorVersion}`);
  for (const root of roots) {
    try {
      const s = statSync(lsR(root));
      hash.update(`${root}:${s.size}:${s.mtimeMs}`);
    } catch {
      hash.update(`${root}:none`);
    }
  }
  return hash.digest('hex').slice(0, 16);
}
