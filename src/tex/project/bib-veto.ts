// latexmk runs bibtex only when every database the .aux names can be found ($bibtex_use = 1,
// its default): with one missing it keeps the .bbl there is (none, or one the project ships,
// as arXiv sources do) and the citations print as [?]. bibtex itself, run anyway, rewrites
// the .bbl from what it could read: a shipped .bbl is lost and packages that add their own
// entries (REVTeX's footnotes in mainNotes.bib) print a bibliography latexmk would not.
// So the runner asks kpsewhich first, in the job's sandbox (the workspace, then BIBINPUTS in
// the TeX tree, as bibtex searches), and skips a bibtex whose databases are not all there.
import type { Helper, ReadFile } from '../passes.js';

/** Runs a fixed command in the job's sandbox (the runner's exec). */
export type Exec = (argv: string[]) => Promise<{ code: number; output: string }>;

/** The databases of \bibdata{a,b} in the .aux that `helper` reads, each as "a.bib". */
export async function bibDatabases(helper: Helper, read: ReadFile): Promise<string[]> {
  const aux = (await read(`${helper.argv.at(-1)!}.aux`))?.toString('utf8') ?? '';
  const names = [...aux.matchAll(/^\\bibdata\{([^}]*)\}/gm)].flatMap((m) => m[1]!.split(','));
  return [...new Set(names.map((n) => n.trim()).filter(Boolean).map((n) => (n.endsWith('.bib') ? n : `${n}.bib`)))];
}

/** A name kpsewhich may be handed: relative, no option look-alike, no "..". */
function safeName(name: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._\/-]*$/.test(name) && !name.split('/').includes('..');
}

/**
 * The databases of a bibtex helper that neither the workspace nor the TeX tree has (empty:
 * run it). A name kpsewhich cannot be asked about is left to bibtex itself.
 */
export async function missingDatabases(helper: Helper, read: ReadFile, exec: Exec): Promise<string[]> {
  if (helper.tool !== 'bibtex') return [];
  const names = (await bibDatabases(helper, read)).filter(safeName);
  if (names.length === 0) return [];
  const found = (await exec(['kpsewhich', ...names])).output.split('\n').map((line) => line.trim()).filter(Boolean);
  return names.filter((name) => !found.some((path) => path === name || path.endsWith(`/${name}`)));
}
