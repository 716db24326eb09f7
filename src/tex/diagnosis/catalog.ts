// The index of what each installed package and class defines, built from this machine's TeX
// Live and cached on disk under its fingerprint: built once (at setup or, failing that, in
// the background on first use), rebuilt when TeX Live changes. Queries are synchronous on the
// loaded index; until it is loaded, diagnosis falls back to the hand-written table.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Compiler } from '../compilers.js';
import { extractDefinitions } from './extract.js';
import { PACKAGE_ENGINES } from './packages.js';
import { fingerprint, listTexFiles, texmfRoots, type TexFile } from './texlive.js';

/** Bump when extraction changes, so cached indexes are rebuilt. */
export const EXTRACTOR_VERSION = 9;

type Kind = 'command' | 'environment';

/** One package or class as stored: names it defines itself (and through the helper files it inputs). */
interface StoredPackage {
  /** 'c' for a class. */
  k?: 'c';
  /** Bytes of the file and its helpers. */
  b: number;
  /** Part of the LaTeX core or the required collection. */
  o?: 1;
  /** Packages it loads (and the class it builds on). */
  r?: string[];
  /** Commands defined at top level / only inside braces (options, hooks, other macros). */
  c?: string[];
  u?: string[];
  /** Environments, likewise. */
  e?: string[];
  v?: string[];
}

interface StoredCatalog {
  version: number;
  fingerprint: string;
  buildMs: number;
  kernel: { c: string[]; e: string[] };
  packages: Record<string, StoredPackage>;
}

export interface Definer {
  package: string;
  /** Defined when the file is loaded, not only inside an option or a hook. */
  sure: boolean;
}

const UNICODE: readonly Compiler[] = ['xelatex', 'lualatex'];
/** Packages whose loading decides the engine; everything that loads them inherits it. */
const ENGINE_ROOTS: Readonly<Record<string, readonly Compiler[]>> = {
  ...PACKAGE_ENGINES,
  luatexbase: ['lualatex'],
  luaotfload: ['lualatex'],
  luatexja: ['lualatex'],
  luacode: ['lualatex'],
  fontspec: UNICODE,
  'unicode-math': UNICODE,
  polyglossia: UNICODE,
};

export class TexCatalog {
  private readonly commandDefiners = new Map<string, Definer[]>();
  private readonly environmentDefiners = new Map<string, Definer[]>();
  private readonly kernelCommands: Set<string>;
  private readonly kernelEnvironments: Set<string>;
  private readonly closures = new Map<string, Set<string>>();
  private readonly requiredBy = new Map<string, string[]>();

  constructor(private readonly data: StoredCatalog) {
    this.kernelCommands = new Set(data.kernel.c);
    this.kernelEnvironments = new Set(data.kernel.e);
    for (const [name, pkg] of Object.entries(data.packages)) {
      const add = (map: Map<string, Definer[]>, names: string[] | undefined, sure: boolean) => {
        for (const n of names ?? []) {
          const list = map.get(n);
          if (list) list.push({ package: name, sure });
          else map.set(n, [{ package: name, sure }]);
        }
      };
      add(this.commandDefiners, pkg.c, true);
      add(this.commandDefiners, pkg.u, false);
      add(this.environmentDefiners, pkg.e, true);
      add(this.environmentDefiners, pkg.v, false);
      for (const dep of pkg.r ?? []) {
        const list = this.requiredBy.get(dep);
        if (list) list.push(name);
        else this.requiredBy.set(dep, [name]);
      }
    }
  }

  get fingerprint(): string {
    return this.data.fingerprint;
  }

  get buildMs(): number {
    return this.data.buildMs;
  }

  get size(): number {
    return Object.keys(this.data.packages).length;
  }

  /** A package of that name is installed (classes are keyed `name.cls`). */
  has(name: string): boolean {
    return Object.hasOwn(this.data.packages, name) && this.data.packages[name]?.k !== 'c';
  }

  hasClass(name: string): boolean {
    return this.data.packages[`${name}.cls`]?.k === 'c';
  }

  private names?: { packages: readonly string[]; classes: readonly string[] };

  /** Installed package names (listed once: a diagnosis compares a name with each). */
  packageNames(): readonly string[] {
    return (this.names ??= this.listNames()).packages;
  }

  classNames(): readonly string[] {
    return (this.names ??= this.listNames()).classes;
  }

  private listNames(): { packages: readonly string[]; classes: readonly string[] } {
    const all = Object.keys(this.data.packages);
    return {
      packages: all.filter((n) => this.data.packages[n]?.k !== 'c'),
      classes: all.filter((n) => this.data.packages[n]?.k === 'c').map((n) => n.slice(0, -4)),
    };
  }

  isCore(name: string): boolean {
    return this.data.packages[name]?.o === 1;
  }

  bytes(name: string): number {
    return this.data.packages[name]?.b ?? Infinity;
  }

  /** The LaTeX kernel (latex.ltx and the files it inputs) defines it. */
  inKernel(name: string, kind: Kind): boolean {
    return (kind === 'command' ? this.kernelCommands : this.kernelEnvironments).has(name);
  }

  /** Packages and classes whose own files define the name. */
  definers(name: string, kind: Kind): Definer[] {
    return (kind === 'command' ? this.commandDefiners : this.environmentDefiners).get(name) ?? [];
  }

  /** How many packages and classes load this one: a measure of how well known it is. */
  loaderCount(name: string): number {
    return this.requiredBy.get(name)?.length ?? 0;
  }

  /** Packages and classes that load `name`, directly. */
  loadersOf(name: string): string[] {
    return this.requiredBy.get(name) ?? [];
  }

  /** The package with everything it loads, transitively. */
  closure(name: string): Set<string> {
    const cached = this.closures.get(name);
    if (cached) return cached;
    const seen = new Set<string>();
    const stack = [name];
    while (stack.length > 0) {
      const next = stack.pop() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      for (const dep of this.data.packages[next]?.r ?? []) stack.push(dep);
    }
    this.closures.set(name, seen);
    return seen;
  }

  /** Loading `pkg` defines the name (through itself or what it loads). */
  provides(pkg: string, name: string, kind: Kind): boolean {
    const definers = this.definers(name, kind);
    if (definers.length === 0) return false;
    const closure = this.closure(pkg);
    return definers.some((d) => closure.has(d.package));
  }

  /** Compilers the package works with (undefined = all), inherited from what it loads. */
  engines(pkg: string): readonly Compiler[] | undefined {
    if (ENGINE_ROOTS[pkg]) return ENGINE_ROOTS[pkg];
    let engines: readonly Compiler[] | undefined;
    for (const dep of this.closure(pkg)) {
      const own = ENGINE_ROOTS[dep];
      if (!own) continue;
      engines = engines ? engines.filter((e) => own.includes(e)) : own;
    }
    // Conflicting requirements mean the loads are conditional on the engine: unknown.
    return engines && engines.length > 0 ? engines : undefined;
  }
}

// ---------------------------------------------------------------- building

/** Reads a TeX file as bytes → latin1, so any encoding parses. */
async function readTex(path: string): Promise<string> {
  return (await readFile(path)).toString('latin1');
}

const HELPER = /\.(def|tex|ltx|cfg|clo|fd)$/;

/** Builds the index from the installed files. Yields between files, so it can run in the background. */
export async function buildCatalog(roots = texmfRoots()): Promise<StoredCatalog> {
  const started = performance.now();
  const files = listTexFiles(roots);
  const packages: Record<string, StoredPackage> = {};
  const helperCache = new Map<string, Promise<ReturnType<typeof extractDefinitions> & { bytes: number }>>();
  const parse = (file: TexFile) => {
    let parsed = helperCache.get(file.path);
    if (!parsed) {
      parsed = readTex(file.path).then((text) => ({ ...extractDefinitions(text), bytes: text.length }));
      helperCache.set(file.path, parsed);
    }
    return parsed;
  };
  const resolveHelper = (name: string): TexFile | undefined => {
    if (HELPER.test(name)) return files.get(name);
    return files.get(`${name}.tex`) ?? (name.includes('.') ? undefined : files.get(`${name}.def`));
  };

  for (const [fileName, file] of files) {
    const m = /^(.+)\.(sty|cls)$/.exec(fileName);
    if (!m?.[1]) continue;
    const name = m[1];
    // Dated copies kept for \RequirePackage rollback, and lwarp's HTML-mode patches: never loaded by name.
    if (/[-_]\d{4}-\d{2}-\d{2}$/.test(name) || name.startsWith('lwarp-')) continue;
    const own = await parse(file).catch(() => undefined);
    if (!own) continue;
    const commands = new Map(own.commands);
    const environments = new Map(own.environments);
    const requires = new Set(own.requires);
    let bytes = own.bytes;
    // Helper files it inputs (two levels: a .def often inputs another).
    const pending = own.inputs.map((n) => ({ n, depth: 1 }));
    const seen = new Set<string>();
    while (pending.length > 0) {
      const { n, depth } = pending.shift() as { n: string; depth: number };
      const helper = resolveHelper(n);
      if (!helper || seen.has(helper.path) || /\.(sty|cls)$/.test(helper.path)) continue;
      seen.add(helper.path);
      const defs = await parse(helper).catch(() => undefined);
      if (!defs) continue;
      bytes += defs.bytes;
      for (const [k, sure] of defs.commands) commands.set(k, (commands.get(k) ?? false) || sure);
      for (const [k, sure] of defs.environments) environments.set(k, (environments.get(k) ?? false) || sure);
      for (const r of defs.requires) requires.add(r);
      if (depth < 3) pending.push(...defs.inputs.map((i) => ({ n: i, depth: depth + 1 })));
    }
    if (own.loadsClass) requires.add(`${own.loadsClass}.cls`);
    requires.delete(name);
    const split = (map: Map<string, boolean>, sure: boolean) => [...map].filter(([, s]) => s === sure).map(([k]) => k);
    const entry: StoredPackage = { b: bytes };
    if (m[2] === 'cls') entry.k = 'c';
    if (file.core) entry.o = 1;
    if (requires.size) entry.r = [...requires];
    const c = split(commands, true);
    const u = split(commands, false);
    const e = split(environments, true);
    const v = split(environments, false);
    if (c.length) entry.c = c;
    if (u.length) entry.u = u;
    if (e.length) entry.e = e;
    if (v.length) entry.v = v;
    // Classes are keyed `name.cls`: article.cls and the article.sty stub are different files.
    packages[m[2] === 'cls' ? `${name}.cls` : name] = entry;
    helperCache.delete(file.path);
  }

  const kernel = { c: new Set<string>(), e: new Set<string>() };
  for (const name of ['latex.ltx', 'fonttext.ltx', 'fontmath.ltx', 'preload.ltx', 'ltluatex.tex', 'expl3-code.tex']) {
    const file = files.get(name);
    if (!file) continue;
    const defs = await parse(file).catch(() => undefined);
    for (const k of defs?.commands.keys() ?? []) kernel.c.add(k);
    for (const k of defs?.environments.keys() ?? []) kernel.e.add(k);
    // expl3 names every engine primitive (\hskip, \vrule, …) once: the kernel has them all.
    if (name === 'expl3-code.tex') {
      const text = await readTex(file.path).catch(() => '');
      for (const m of text.matchAll(/\\__kernel_primitive:NN\s*\\([A-Za-z]+)\s/g)) if (m[1]) kernel.c.add(m[1]);
    }
  }
  return {
    version: EXTRACTOR_VERSION,
    fingerprint: fingerprint(roots, EXTRACTOR_VERSION),
    buildMs: Math.round(performance.now() - started),
    kernel: { c: [...kernel.c], e: [...kernel.e] },
    packages,
  };
}

// ---------------------------------------------------------------- cache
// The cache folder is a setting (config.ts, texIndexDir): callers pass it in.

function cachePath(dir: string, print: string): string {
  return join(dir, `texlive-index-${print}.json`);
}

/** The cached index for the installed TeX Live, or undefined when it was not built yet. */
export function loadCachedCatalog(dir: string, roots = texmfRoots()): TexCatalog | undefined {
  try {
    const data = JSON.parse(readFileSync(cachePath(dir, fingerprint(roots, EXTRACTOR_VERSION)), 'utf8')) as StoredCatalog;
    return data.version === EXTRACTOR_VERSION ? new TexCatalog(data) : undefined;
  } catch {
    return undefined;
  }
}

/** Builds the index and writes it to the cache (atomically); returns it loaded. */
export async function buildAndCacheCatalog(dir: string, roots = texmfRoots()): Promise<TexCatalog> {
  const data = await buildCatalog(roots);
  try {
    mkdirSync(dir, { recursive: true });
    const target = cachePath(dir, data.fingerprint);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(data));
    renameSync(temp, target);
    // Indexes of an earlier TeX Live (or extractor) are never read again.
    for (const old of readdirSync(dir)) {
      if (/^texlive-index-[0-9a-f]+\.json$/.test(old) && join(dir, old) !== target) rmSync(join(dir, old), { force: true });
    }
  } catch {
    // An unwritable cache only costs a rebuild next time.
  }
  return new TexCatalog(data);
}

let current: TexCatalog | undefined;
let loading: Promise<TexCatalog | undefined> | undefined;

/** The loaded index, if any (ensureCatalog loads it). */
export function catalog(): TexCatalog | undefined {
  return current;
}

/**
 * Loads the index: from the cache in `dir` at once, synchronously (tens of ms), so that answers
 * from then on do not depend on timing; without a cache, built in the background. Resolves to
 * undefined when TeX Live is absent.
 */
export function ensureCatalog(dir: string): Promise<TexCatalog | undefined> {
  if (current) return Promise.resolve(current);
  if (loading) return loading;
  const roots = texmfRoots();
  current = loadCachedCatalog(dir, roots);
  loading = current
    ? Promise.resolve(current.size > 0 ? current : undefined)
    : buildAndCacheCatalog(dir, roots)
        .then((built) => {
          current = built;
          return built.size > 0 ? built : undefined;
        })
        .catch(() => undefined);
  return loading;
}
