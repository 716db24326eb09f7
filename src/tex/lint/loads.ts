// What a document loads and reads, found in its text without running TeX: the class and
// packages (checked against the installed TeX Live's index, src/tex/diagnosis/catalog.ts,
// with the closest installed names for one that is missing) and the files it \input s or
// \includegraphics (checked against the files a request carries).
import { basename } from 'node:path';
import { catalog, type TexCatalog } from '../diagnosis/catalog.js';
import { stripComments } from '../diagnosis/extract.js';
import { editDistance } from '../diagnosis/names.js';
import { GRAPHICS_EXTENSIONS } from '../graphics.js';
import { imageTool } from '../image/tools.js';

export interface Load {
  kind: 'class' | 'package';
  name: string;
  line: number;
}

export interface FileUse {
  command: 'input' | 'include' | 'includegraphics' | 'bibliography' | 'addbibresource';
  name: string;
  line: number;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** A name written out in full: no macro, no parameter (those are only known when TeX runs). */
const literal = (name: string) => name !== '' && !/[\\#{}]/.test(name);

export function documentLoads(source: string): Load[] {
  // stripComments keeps every line break, so offsets still give the source's line numbers.
  const text = stripComments(source);
  const loads: Load[] = [];
  for (const m of text.matchAll(/\\(documentclass|usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]*)\}/g)) {
    const kind = m[1] === 'documentclass' ? 'class' : 'package';
    for (const raw of (m[2] ?? '').split(',')) {
      const name = raw.trim();
      if (literal(name)) loads.push({ kind, name, line: lineAt(text, m.index) });
    }
  }
  return loads;
}

export function fileUses(source: string): FileUse[] {
  const text = stripComments(source);
  const uses: FileUse[] = [];
  const pattern = /\\(input|include|includegraphics|bibliography|addbibresource)\*?\s*(?:\[[^\]]*\]\s*)*\{([^}]*)\}/g;
  for (const m of text.matchAll(pattern)) {
    const command = m[1] as FileUse['command'];
    const names = command === 'bibliography' ? (m[2] ?? '').split(',') : [m[2] ?? ''];
    for (const raw of names) {
      const name = raw.trim().replace(/^"(.*)"$/, '$1');
      if (literal(name)) uses.push({ command, name, line: lineAt(text, m.index) });
    }
  }
  return uses;
}

/** Up to `max` installed names nearest `name` (at most a third of its letters changed), nearest first. */
export function closestInstalled(name: string, installed: readonly string[], max = 3): string[] {
  const limit = Math.max(1, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  return installed
    .map((candidate) => ({ candidate, d: editDistance(lower, candidate.toLowerCase()) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map(({ candidate }) => candidate);
}

export interface MissingLoad extends Load {
  suggestions: string[];
}

/** Classes and packages the document loads that this TeX Live lacks; undefined while the index is not loaded. */
export function missingLoads(source: string, index: TexCatalog | undefined = catalog()): MissingLoad[] | undefined {
  if (!index) return undefined;
  const missing: MissingLoad[] = [];
  let packages: string[] | undefined;
  let classes: string[] | undefined;
  for (const load of documentLoads(source)) {
    if (load.kind === 'class' ? index.hasClass(load.name) : index.has(load.name)) continue;
    const installed = load.kind === 'class' ? (classes ??= index.classNames()) : (packages ??= index.packageNames());
    missing.push({ ...load, suggestions: closestInstalled(load.name, installed) });
  }
  return missing;
}

/** Of `names` (file names with extension), those the default TeX image has (kpsewhich); empty when it cannot run. */
export async function installedFiles(names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  try {
    const stdout = await imageTool(['kpsewhich', ...names]);
    return new Set(stdout.split('\n').filter(Boolean).map((path) => basename(path)));
  } catch (err) {
    // kpsewhich exits 1 when some name is not found, and still prints the ones it found.
    const stdout = (err as { stdout?: string }).stdout ?? '';
    return new Set(stdout.split('\n').filter(Boolean).map((path) => basename(path)));
  }
}

/** The file names TeX would try for a use: \input{x} reads x.tex, \includegraphics{x} x.png, x.pdf, … */
export function candidateNames(use: FileUse): string[] {
  const hasExtension = /\.[A-Za-z0-9]{1,5}$/.test(use.name);
  switch (use.command) {
    case 'input':
      return hasExtension ? [use.name, `${use.name}.tex`] : [`${use.name}.tex`, use.name];
    case 'include':
      return [`${use.name}.tex`];
    case 'includegraphics':
      return hasExtension ? [use.name] : GRAPHICS_EXTENSIONS.map((ext) => `${use.name}.${ext}`);
    case 'bibliography':
      return [use.name.endsWith('.bib') ? use.name : `${use.name}.bib`];
    case 'addbibresource':
      return [use.name];
  }
}
