// Which installed package most likely provides an undefined command or environment, from the
// TeX Live index. Ranked, in order: packages that work with the engine; the package that also
// defines the most of the document's other undefined names (a deleted \usepackage takes
// several names with it); a package the document names or whose family it already uses; the
// package real documents load for the name (usage.ts); of those covering the document, well-known ones first; packages that define the name themselves before those that load a definer; definitions made
// at load time before ones inside options or hooks; the LaTeX core and required collection;
// well-known packages (loaded by many others); the smallest file.
import type { Compiler } from '../compilers.js';
import type { TexCatalog } from './catalog.js';
import { extractDefinitions, stripComments } from './extract.js';
import { KERNEL_COMMANDS, KERNEL_ENVIRONMENTS } from './names.js';
import type { ProjectDefinitions } from './project.js';
import { documentsLoading } from './usage.js';

/** What LaTeX and the standard classes define in ways the index cannot read (\small comes from size10.clo, chosen at run time). */
const KERNEL_COMMAND_SET = new Set(KERNEL_COMMANDS);
const KERNEL_ENVIRONMENT_SET = new Set(KERNEL_ENVIRONMENTS);

export type NameKind = 'command' | 'environment';

export interface Candidate {
  package: string;
  engines?: readonly Compiler[];
  /** Defined when the package loads (not only inside an option or hook). */
  sure: boolean;
  /** The package's own files define it (it does not just load a package that does). */
  direct: boolean;
  /** Other undefined names of the document it also defines. */
  coverage: number;
}

export interface DocumentContext {
  engine: Compiler;
  /** The submitted main.tex. */
  source?: string;
  /** The hand-written table's choice, when it has one: knowledge the index lacks (graphicx over graphics). */
  preferred?: string;
  /** What the project's own classes and packages define and load. */
  project?: ProjectDefinitions;
}

const MAX_INDIRECT = 400;
/** A name defined by more packages than this tells nothing about which one is missing. */
const TELLING_DEFINERS = 25;
/**
 * The document's other undefined names that weigh in, first ones first: coverage is counted
 * for each candidate against each of them, and a deleted \usepackage takes a few dozen at most.
 */
const MAX_TELLING = 100;
/** A package that loads a definer is a candidate only if at least this many packages load it in turn. */
const MIN_LOADERS = 2;

export function rankCandidates(cat: TexCatalog, name: string, kind: NameKind, ctx: DocumentContext): Candidate[] {
  const direct = new Map<string, boolean>();
  /** Files a front package loads for its work (fontspec-xetex, caption3, pgfcore): documents load the front. */
  const inner = new Set<string>();
  for (const d of cat.definers(name, kind)) {
    if (!cat.has(d.package)) continue; // classes cannot be added with \usepackage
    direct.set(d.package, (direct.get(d.package) ?? false) || d.sure);
    for (const front of cat.loadersOf(d.package)) {
      if (front === d.package || !d.package.startsWith(front) || !cat.has(front)) continue;
      inner.add(d.package);
      direct.set(front, (direct.get(front) ?? false) || d.sure);
    }
  }
  if (direct.size === 0) return [];
  const doc = ctx.source === undefined ? undefined : readDocument(cat, ctx.source, ctx.project);
  const missing = doc ? doc.missing.filter((m) => !(m.name === name && m.kind === kind)) : [];

  const pool = new Map<string, Candidate>();
  // Only names few packages define say which package went missing (\section or \hskip say nothing).
  const telling = missing.filter((m) => cat.definers(m.name, m.kind).length <= TELLING_DEFINERS).slice(0, MAX_TELLING);
  const coverage = (pkg: string) => telling.reduce((n, m) => n + Number(cat.provides(pkg, m.name, m.kind)), 0);
  for (const [pkg, sure] of direct) pool.set(pkg, { package: pkg, sure, direct: true, coverage: coverage(pkg), ...engines(cat, pkg) });
  if (telling.length > 0) {
    // A package that loads a definer joins by covering as much of the document's undefined names
    // as the best definer, and then wins only by being better known (mathtools, which loads
    // amsmath, over a math-font package that happens to define both names itself).
    const best = Math.max(...[...pool.values()].map((c) => c.coverage));
    const frontier = [...direct.keys()];
    const seen = new Set(frontier);
    for (let depth = 0; depth < 3 && frontier.length > 0 && seen.size < MAX_INDIRECT; depth++) {
      for (const pkg of frontier.splice(0)) {
        for (const loader of cat.loadersOf(pkg)) {
          if (seen.has(loader) || !cat.has(loader)) continue;
          seen.add(loader);
          frontier.push(loader);
          // Only packages others build on (mathtools over amsmath), not kitchen-sink bundles.
          if (cat.loaderCount(loader) < MIN_LOADERS && !doc?.mentions.has(loader)) continue;
          const covers = coverage(loader);
          if (covers > 0 && covers >= best) pool.set(loader, { package: loader, sure: direct.get(pkg) ?? true, direct: false, coverage: covers, ...engines(cat, loader) });
        }
      }
    }
  }

  const related = (pkg: string) => Boolean(doc && (doc.mentions.has(pkg) || doc.families.some((f) => pkg.startsWith(f))));
  const key = (c: Candidate): number[] => [
    Number(!c.engines || c.engines.includes(ctx.engine)),
    Number(!inner.has(c.package)),
    c.coverage,
    Number(c.package === ctx.preferred),
    Number(related(c.package)),
    documentsLoading(c.package, name, kind),
    // Among those covering the document, a well-known package before a little-known definer.
    c.coverage > 0 ? Math.min(3, Math.floor(Math.log2(1 + cat.loaderCount(c.package)))) : 0,
    Number(c.direct),
    Number(c.sure),
    Number(cat.isCore(c.package)),
    Math.min(3, Math.floor(Math.log2(1 + cat.loaderCount(c.package)))),
    -cat.bytes(c.package),
  ];
  return [...pool.values()].sort((a, b) => compare(key(b), key(a)));
}

function engines(cat: TexCatalog, pkg: string): { engines?: readonly Compiler[] } {
  const e = cat.engines(pkg);
  return e ? { engines: e } : {};
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

interface DocumentFacts {
  /** Names the document uses that neither LaTeX, its class, its packages nor the document define. */
  missing: Array<{ name: string; kind: NameKind }>;
  /** Words of the raw source (comments included): a commented-out \usepackage names its package. */
  mentions: Set<string>;
  /** Name prefixes of the class and packages it loads (scrartcl → scr, glossaries → glossaries-). */
  families: string[];
  /** LaTeX, the class or a loaded package defines the name. */
  defined: (name: string, kind: NameKind) => boolean;
  /** The class and packages the document loads, with everything they load. */
  loads: Set<string>;
}

/** The document's class or packages (or LaTeX itself) define the name. */
export function documentProvides(cat: TexCatalog, source: string, name: string, kind: NameKind, project?: ProjectDefinitions): boolean {
  return readDocument(cat, source, project).defined(name, kind);
}

const cache = new WeakMap<TexCatalog | ProjectDefinitions, Map<string, DocumentFacts>>();
const NO_PROJECT: ProjectDefinitions = { commands: new Set(), environments: new Set(), requires: new Set() };

/** What the document loads, defines and uses, read once per source. */
export function readDocument(cat: TexCatalog, source: string, project: ProjectDefinitions = NO_PROJECT): DocumentFacts {
  // Keyed by the project's definitions too (one object per diagnosis): the same main.tex with other files reads otherwise.
  const key = project === NO_PROJECT ? cat : project;
  let bySource = cache.get(key);
  if (!bySource) cache.set(key, (bySource = new Map()));
  const hit = bySource.get(source);
  if (hit) return hit;
  const text = stripComments(source);
  const cls = /\\documentclass\s*(?:\[[^\]]*\]\s*)?\{\s*([^}\s]+)\s*\}/.exec(text)?.[1];
  const loaded = new Set<string>();
  // Only the preamble loads packages; a \usepackage in the body is an example in \verb or verbatim.
  const begin = text.search(/\\begin\s*\{document\}/);
  const preamble = begin === -1 ? text : text.slice(0, begin);
  for (const m of preamble.matchAll(/\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]+)\}/g)) {
    for (const p of (m[1] ?? '').split(',')) if (p.trim()) loaded.add(p.trim());
  }
  // Everything the class and packages load, once: a name is defined when one of its definers
  // is in it (asking each loaded package in turn was names × packages, and both are the caller's).
  const loads = new Set<string>();
  // A class or package the project brings loads what its own file requires.
  for (const p of [...loaded, ...(cls ? [`${cls}.cls`] : []), ...project.requires]) for (const q of cat.closure(p)) loads.add(q);
  const defined = (n: string, kind: NameKind) => {
    if (cat.inKernel(n, kind) || (kind === 'command' ? KERNEL_COMMAND_SET : KERNEL_ENVIRONMENT_SET).has(n)) return true;
    if ((kind === 'command' ? project.commands : project.environments).has(n)) return true;
    return cat.definers(n, kind).some((d) => loads.has(d.package));
  };
  const own = extractDefinitions(text);
  const missing: DocumentFacts['missing'] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/\\([A-Za-z]+)|\\begin\s*\{([^}]+)\}/g)) {
    const kind: NameKind = m[2] !== undefined ? 'environment' : 'command';
    const n = (m[2] ?? m[1] ?? '').trim();
    if (!n || seen.has(`${kind}:${n}`)) continue;
    seen.add(`${kind}:${n}`);
    if ((kind === 'command' ? own.commands : own.environments).has(n) || (kind === 'command' ? project.commands : project.environments).has(n)) continue;
    if (cat.definers(n, kind).length === 0 || defined(n, kind)) continue;
    missing.push({ name: n, kind });
  }
  const families = [...loaded, ...(cls ? [cls] : [])]
    .map((p) => (/^scr|^koma/.test(p) ? 'scr' : `${p}-`))
    .filter((f) => f.length >= 3);
  // A name given whole as an argument anywhere, comments included (a commented-out \usepackage,
  // \pkg{kantlipsum} in the text); not \begin/\end, whose arguments are environments.
  const mentions = new Set<string>();
  for (const m of source.matchAll(/(\\(?:begin|end)\s*)?\{\s*([A-Za-z][A-Za-z0-9-]*(?:\s*,\s*[A-Za-z][A-Za-z0-9-]*)*)\s*\}/g)) {
    if (m[1] === undefined) for (const p of (m[2] ?? '').split(',')) mentions.add(p.trim());
  }
  const facts = { missing, mentions, families, defined, loads };
  bySource.set(source, facts);
  if (bySource.size > 32) bySource.delete(bySource.keys().next().value as string);
  return facts;
}
