// What a document loads and reads, found in its text without running TeX: the class and
// packages (checked against the installed TeX Live's index, src/tex/diagnosis/catalog.ts,
// with the closest installed names for one that is missing) and the files it \input s or
// \includegraphics (checked against the files a request carries).
import { basename } from 'node:path';
import { catalog, type TexCatalog } from '../diagnosis/catalog.js';
import { stripComments } from '../diagnosis/extract.js';
import { boundedEditDistance, MAX_SUGGESTED_NAME } from '../diagnosis/names.js';
import { GRAPHICS_EXTENSIONS } from '../project/graphics.js';
import { imageTool } from '../image/tools.js';
import { defaultImageRoot } from '../image/default.js';

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

/** Offset → 1-based line, by binary search over the line starts (one pass to build: a scan per lookup was quadratic). */
export function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** A name written out in full: no macro, no parameter (those are only known when TeX runs). */
const literal = (name: string) => name !== '' && !/[\\#{}]/.test(name);

/** What one source loads and reads, from one pass over its text without comments. */
export interface SourceFacts {
  loads: Load[];
  /** Each file once (command and name), at its first line: the same \input a thousand times is one file. */
  uses: FileUse[];
}

export function readSource(source: string): SourceFacts {
  // stripComments keeps every line break, so offsets still give the source's line numbers.
  const text = stripComments(source);
  const lineAt = lineIndex(text);
  const loads: Load[] = [];
  for (const m of text.matchAll(/\\(documentclass|usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]*)\}/g)) {
    const kind = m[1] === 'documentclass' ? 'class' : 'package';
    for (const raw of (m[2] ?? '').split(',')) {
      const name = raw.trim();
      if (literal(name)) loads.push({ kind, name, line: lineAt(m.index) });
    }
  }
  const uses: FileUse[] = [];
  const seen = new Set<string>();
  const pattern = /\\(input|include|includegraphics|bibliography|addbibresource)\*?\s*(?:\[[^\]]*\]\s*)*\{([^}]*)\}/g;
  for (const m of text.matchAll(pattern)) {
    const command = m[1] as FileUse['command'];
    const names = command === 'bibliography' ? (m[2] ?? '').split(',') : [m[2] ?? ''];
    for (const raw of names) {
      const name = raw.trim().replace(/^"(.*)"$/, '$1');
      const key = `${command}:${name}`;
      if (!literal(name) || seen.has(key)) continue;
      seen.add(key);
      uses.push({ command, name, line: lineAt(m.index) });
    }
  }
  return { loads, uses };
}

export function documentLoads(source: string): Load[] {
  return readSource(source).loads;
}

export function fileUses(source: string): FileUse[] {
  return readSource(source).uses;
}

/** Letters, digits and the rest: counted per name for the filter below. */
const BINS = 38;
function letterCounts(lower: string): Uint8Array {
  const counts = new Uint8Array(BINS);
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    const bin = c >= 97 && c <= 122 ? c - 97 : c >= 48 && c <= 57 ? c - 22 : c === 45 ? 36 : 37;
    counts[bin] = Math.min(255, (counts[bin] ?? 0) + 1);
  }
  return counts;
}

/**
 * Installed names by length, lowercased and with their letter counts: a name is only compared
 * with those whose length is within the edit limit of its own, and whose letters differ from
 * its own by no more than that (each edit changes the letter counts by at most one each way;
 * a swap not at all), so the edit distance runs on the few that may be near.
 */
export class NameIndex {
  private readonly byLength: Array<Array<{ name: string; lower: string; counts: Uint8Array }>> = [];

  constructor(names: readonly string[]) {
    for (const name of names) {
      const lower = name.toLowerCase();
      (this.byLength[name.length] ??= []).push({ name, lower, counts: letterCounts(lower) });
    }
  }

  /** Up to `max` names nearest `name` (at most a third of its letters changed), nearest first; none for a name over MAX_SUGGESTED_NAME. */
  closest(name: string, max = 3): string[] {
    if (name.length > MAX_SUGGESTED_NAME) return [];
    const limit = Math.max(1, Math.floor(name.length / 3));
    const lower = name.toLowerCase();
    const counts = letterCounts(lower);
    const near: Array<{ candidate: string; d: number }> = [];
    for (let length = Math.max(0, name.length - limit); length <= name.length + limit; length++) {
      for (const { name: candidate, lower: other, counts: theirs } of this.byLength[length] ?? []) {
        let more = 0;
        let fewer = 0;
        for (let bin = 0; bin < BINS; bin++) {
          const diff = (counts[bin] ?? 0) - (theirs[bin] ?? 0);
          if (diff > 0) more += diff;
          else fewer -= diff;
        }
        if (Math.max(more, fewer) > limit) continue;
        const d = boundedEditDistance(lower, other, limit);
        if (d <= limit) near.push({ candidate, d });
      }
    }
    return near
      .sort((a, b) => a.d - b.d || a.candidate.localeCompare(b.candidate))
      .slice(0, max)
      .map(({ candidate }) => candidate);
  }
}

/** Up to `max` installed names nearest `name` (at most a third of its letters changed), nearest first. */
export function closestInstalled(name: string, installed: readonly string[], max = 3): string[] {
  return new NameIndex(installed).closest(name, max);
}

export interface MissingLoad extends Load {
  suggestions: string[];
}

const indexes = new WeakMap<TexCatalog, { packages: NameIndex; classes: NameIndex }>();

function namesOf(index: TexCatalog): { packages: NameIndex; classes: NameIndex } {
  let names = indexes.get(index);
  if (!names) indexes.set(index, (names = { packages: new NameIndex(index.packageNames()), classes: new NameIndex(index.classNames()) }));
  return names;
}

/**
 * Missing names of one request that get suggestions: a document missing more has a wrong
 * TeX Live, not typos, and each search costs the event loop up to a millisecond.
 */
export const MAX_SUGGESTED_LOADS = 20;

/**
 * Classes and packages the document loads that this TeX Live lacks; undefined while the index
 * is not loaded. `budget` (shared by the files of one request) counts the names still to get
 * suggestions; a repeated name is searched once, and the event loop is given back before each search.
 */
export async function missingLoads(loads: readonly Load[], index: TexCatalog | undefined = catalog(), budget = { suggestions: MAX_SUGGESTED_LOADS }): Promise<MissingLoad[] | undefined> {
  if (!index) return undefined;
  const missing: MissingLoad[] = [];
  const suggested = new Map<string, string[]>();
  for (const load of loads) {
    if (load.kind === 'class' ? index.hasClass(load.name) : index.has(load.name)) continue;
    const key = `${load.kind}:${load.name}`;
    let suggestions = suggested.get(key);
    if (!suggestions) {
      const names = load.kind === 'class' ? namesOf(index).classes : namesOf(index).packages;
      // Each search takes up to a few milliseconds: other requests go in between.
      if (budget.suggestions > 0) await new Promise((resolve) => setImmediate(resolve));
      suggestions = budget.suggestions > 0 ? names.closest(load.name) : [];
      budget.suggestions--;
      suggested.set(key, suggestions);
    }
    missing.push({ ...load, suggestions });
  }
  return missing;
}

/** What kpsewhich said of each name (the image does not change while the service runs), at most this many kept. */
const KNOWN_FILES_MAX = 10_000;
const knownFiles = new Map<string, boolean>();

/**
 * Of `names` (file names with extension), those the default TeX image has (kpsewhich); empty
 * when it cannot run. Names asked before are answered from memory: each kpsewhich is a process
 * the service forks, which holds its event loop for a while.
 */
export async function installedFiles(names: readonly string[]): Promise<Set<string>> {
  const ask = names.filter((name) => !knownFiles.has(name));
  if (ask.length > 0) {
    let stdout: string;
    let answered = true;
    try {
      stdout = await imageTool(['kpsewhich', ...ask], defaultImageRoot());
    } catch (err) {
      // kpsewhich exits with the count of names it did not find (1, 2, …; not only 1), and still
      // prints the ones it found. Anything else (killed at the timeout, not started) is no answer.
      const failed = err as { stdout?: string; code?: unknown; killed?: boolean; signal?: unknown };
      stdout = failed.stdout ?? '';
      answered = typeof failed.code === 'number' && failed.code > 0 && !failed.killed && !failed.signal;
    }
    const found = new Set(stdout.split('\n').filter(Boolean).map((path) => basename(path)));
    if (answered) {
      for (const name of ask) {
        if (knownFiles.size >= KNOWN_FILES_MAX) knownFiles.delete(knownFiles.keys().next().value as string);
        knownFiles.set(name, found.has(name));
      }
    } else return new Set(names.filter((name) => found.has(name) || knownFiles.get(name)));
  }
  return new Set(names.filter((name) => knownFiles.get(name)));
}

/** What kpsewhich said of `name` before (undefined: not asked yet, or no longer kept). */
export function knownFile(name: string): boolean | undefined {
  return knownFiles.get(name);
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
