// What a new image must do before it is marked ready: each engine compiles hello, xelatex and
// lualatex load a system font through fontspec, a biblatex document goes through biber, and
// the fonts are as TeX Live ships them (no dangling font link, every file pdftex.map names
// found but TeX Live's own gaps, ClearSans with pdflatex); otherwise the build fails, naming them.
// Everything runs in the same sandbox compiles use, with the image as its root.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxed } from '../sandbox/sandbox.js';
import { danglingLinks, judgeFonts, pdftexMapFiles, unfound, type FontCheck } from './fonts.js';
import { knownGap } from './map-gaps.js';
import type { TexliveYear } from './releases.js';
import type { ImageInfo } from './store.js';

export const ENGINE_BINARIES = { pdflatex: 'pdftex', xelatex: 'xetex', lualatex: 'luahbtex' } as const;

const HELLO = '\\documentclass{article}\\begin{document}Hello, world.\\end{document}\n';
const FONTSPEC = '\\documentclass{article}\\usepackage{fontspec}\\setmainfont{TeX Gyre Termes}\\begin{document}Grüße, fontspec.\\end{document}\n';
const BIBER = `\\documentclass{article}
\\usepackage[backend=biber]{biblatex}
\\addbibresource{refs.bib}
\\begin{document}Cited \\cite{knuth}.\\printbibliography\\end{document}
`;
const CLEARSANS = '\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{ClearSans}\\begin{document}Clear Sans, \\textbf{bold}.\\end{document}\n';
const BIB = '@book{knuth, author={Donald E. Knuth}, title={The {\\TeX}book}, year={1984}, publisher={Addison-Wesley}}\n';

/** Runs a shell command in the image's sandbox with `workspace` as /job; resolves to stdout. */
export function runInImage(root: string, workspace: string, script: string, timeoutMs = 300_000): Promise<string> {
  const { file, args } = sandboxed(
    {
      workspace,
      root,
      isolate: true,
      env: { TEXMFVAR: '/tmp/texmf-var', TEXMFCACHE: '/tmp/texmf-var', LC_ALL: 'C.UTF-8' },
      limits: { cpuSeconds: 600, fileBytes: 1 << 30, memoryBytes: 4 * 1024 ** 3, processes: 64 },
    },
    ['sh', '-c', script],
  );
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script.slice(0, 80)} failed (exit ${code}): ${out.slice(-1500)}`))));
  });
}

/** Debian's version of a package from the image's dpkg database. */
export async function packageVersion(root: string, name: string): Promise<string> {
  const status = await readFile(join(root, 'var/lib/dpkg/status'), 'utf8');
  const stanza = status.split('\n\n').find((s) => s.startsWith(`Package: ${name}\n`));
  return /^Version: (.*)$/m.exec(stanza ?? '')?.[1] ?? 'unknown';
}

/** First line of each engine's --version, read in the image. */
export async function engineVersions(root: string, workspace: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [engine, binary] of Object.entries(ENGINE_BINARIES)) {
    out[engine] = (await runInImage(root, workspace, `${binary} --version`, 30_000)).split('\n')[0]!.trim();
  }
  return out;
}

/**
 * The font check (issue 39): links under the TeX trees that point nowhere in the image, and the
 * files pdftex.map names that kpsewhich does not find, less TeX Live's own gaps (map-gaps.ts).
 * `workspace` is a folder the image's sandbox sees as /job.
 */
export async function checkFonts(root: string, workspace: string): Promise<FontCheck> {
  const dangling = await danglingLinks(root);
  const names = (await pdftexMapFiles(root)) ?? [];
  const missing = await unfound(names, join(workspace, 'map-names.txt'), '/job/map-names.txt', (script) => runInImage(root, workspace, script));
  return judgeFonts(dangling, names.length, missing.filter((name) => !knownGap(name)));
}

export async function verifyImage(root: string, year: TexliveYear, suite: string): Promise<Omit<ImageInfo, 'builtAt' | 'buildSeconds' | 'bytes'>> {
  const workspace = await mkdtemp(join(tmpdir(), `quire-verify-${year}-`));
  try {
    await chmod(workspace, 0o777);
    await writeFile(join(workspace, 'hello.tex'), HELLO);
    await writeFile(join(workspace, 'fontspec.tex'), FONTSPEC);
    await writeFile(join(workspace, 'cite.tex'), BIBER);
    await writeFile(join(workspace, 'refs.bib'), BIB);
    const tex = (engine: string, name: string) => `${engine} -interaction=nonstopmode -halt-on-error -jobname=${name}-${engine} ${name}.tex >/dev/null`;
    for (const engine of Object.keys(ENGINE_BINARIES)) await runInImage(root, workspace, `${tex(engine, 'hello')} && test -s hello-${engine}.pdf`);
    for (const engine of ['xelatex', 'lualatex']) await runInImage(root, workspace, `${tex(engine, 'fontspec')} && test -s fontspec-${engine}.pdf`);
    await runInImage(root, workspace, `${tex('pdflatex', 'cite')} && biber --quiet cite-pdflatex && ${tex('pdflatex', 'cite')} && grep -q Knuth cite-pdflatex.bbl`);
    const fonts = await checkFonts(root, workspace);
    if (fonts.problems.length > 0) throw new Error(`the TeX Live ${year} image's fonts are not as TeX Live ships them:\n${fonts.problems.join('\n')}`);
    await writeFile(join(workspace, 'clearsans.tex'), CLEARSANS);
    await runInImage(root, workspace, `${tex('pdflatex', 'clearsans')} && test -s clearsans-pdflatex.pdf`);
    return { year, suite, texliveVersion: await packageVersion(root, 'texlive-base'), engines: await engineVersions(root, workspace) };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}
