// `npm run bench:diagnosis`: real documents from the TeX image's own tree, the real-project
// corpus and the gallery (diagnosis-docs.ts; BENCH_EXTRA=0 leaves those out), each broken in
// one known way (a \usepackage deleted, a package/class/environment misspelt, a brace or $…$
// dropped, \begin{document} deleted, a missing image, an undefined command, a character the
// font lacks), compiled in the sandbox and diagnosed as the service does (with probe
// compiles). Scores class, symbol and package, the wrong-diagnosis rate, and a mechanical fix
// loop that applies the suggestion and compiles again. Slow (minutes); runs two TeX jobs at a time.
// Probes run under the service's probe budget (each mutant a caller of its own). `--load`
// runs the same with a CPU burner on every core in a second process (issue 24: the verdicts
// must not depend on the machine's load); `--json <file>` writes the headline figures.
// It runs on the images the service serves (QUIRE_TEXLIVE's ready years, as `npm run setup`
// builds them), one after the other, documents and TeX both from that year's image, and
// prints the figures per TeX Live year.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { systemClock } from '../src/clock.js';
import { probeSettings, texIndexDir, texliveSettings } from '../src/config.js';
import { ProbeRefused, WindowProbeBudget } from '../src/compile/probe-budget.js';
import type { Compiler } from '../src/quota/plans.js';
import { ensureCatalog, type TexCatalog } from '../src/tex/diagnosis/catalog.js';
import { analyzeMissingCharacters, diagnose, type Diagnosis, type LogAnalysis } from '../src/tex/diagnosis/index.js';
import { parseErrors, primaryError } from '../src/tex/diagnosis/log.js';
import { servedImages, type TexImage } from '../src/tex/image/store.js';
import type { TexResult } from '../src/tex/job.js';
import type { TexRunner } from '../src/tex/runner.js';
import { applyFix, compile as compileSource, corpusRunner, pool } from '../test/diagnosis/corpus.js';
import { filesUnder, galleryDocs, projectDocs, type BenchDoc } from './diagnosis-docs.js';

/** A compile of `source` in place of the document's main file, with the document's other files. */
function compile(runner: TexRunner, source: string, engine: Compiler, doc?: Doc): Promise<TexResult> {
  return compileSource(runner, source, engine, doc?.files);
}

/**
 * Where the documents are: a folder inside each image (default its TeX Live tree; the images
 * hold no documentation folder), or an absolute path on the host (a documentation tree
 * fetched apart), whose documents then run on every image.
 */
const DOC_DIR = process.env.BENCH_DOC_DIR ?? 'usr/share/texlive/texmf-dist';
// Every distinct document that compiles cleanly (80-odd in the 2026 image, 3 mutants each): at
// 40 documents only 16 mutants lost a package, and one miss moved the 95% goal by 6 points.
// About 7 minutes on a quiet 2-core machine. BENCH_DOCS caps it (40 until 2026-12-06).
const MAX_DOCS = Number(process.env.BENCH_DOCS ?? Infinity);
const PER_DOC = Number(process.env.BENCH_MUTANTS_PER_DOC ?? 3);
const LANES = Number(process.env.BENCH_LANES ?? 2);
const FIX_ROUNDS = 3;
const PER_DIR = Number(process.env.BENCH_PER_DIR ?? 6);
/** Deleted \usepackage lines per document, at most: the case this bench is mostly about. */
const DELETES_PER_DOC = Number(process.env.BENCH_DELETES_PER_DOC ?? 2);
const LOAD = process.argv.includes('--load');
const JSON_OUT = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : undefined;
/** The burner stops itself after this long, should this process die without stopping it. */
const BURN_MAX_MS = 45 * 60 * 1000;
const CACHE_DIR = texIndexDir();

/** BENCH_EXTRA=0: only the image's own documents (as before issue 39). */
const EXTRA = process.env.BENCH_EXTRA !== '0';

type Doc = BenchDoc;

type Kind =
  | 'delete_usepackage'
  | 'misspell_package'
  | 'misspell_class'
  | 'misspell_environment'
  | 'drop_brace'
  | 'drop_math'
  | 'delete_begin_document'
  | 'missing_image'
  | 'undefined_command'
  | 'unicode_char'
  | 'extra_brace'
  | 'missing_input'
  | 'misspell_command';

interface Mutant {
  doc: Doc;
  kind: Kind;
  source: string;
  truth: { class: string; symbol: string | null; package: string | null; class_name?: string };
  /** The caller its compiles and probes count against. */
  id: string;
}

// ---------------------------------------------------------------- documents

function* texFiles(dir: string): Generator<string> {
  for (const path of filesUnder(dir)) if (/\.tex(\.gz)?$/.test(path)) yield path;
}

function readDoc(path: string): string | undefined {
  try {
    if (statSync(path).size > 200_000) return undefined;
    const raw = readFileSync(path);
    const data = path.endsWith('.gz') ? gunzipSync(raw) : raw;
    const text = data.toString('utf8');
    return text.includes('\uFFFD') ? undefined : text;
  } catch {
    return undefined;
  }
}

/**
 * The document with its local \input/\include files pasted in (they sit next to it), and its
 * .bib file written by a filecontents* environment, as a caller of the service would send it.
 */
function inlineInputs(source: string | undefined, path: string): string | undefined {
  if (source === undefined) return undefined;
  const dir = path.slice(0, path.lastIndexOf('/'));
  const local = (name: string, ext: string) => readDoc(join(dir, /\.\w+$/.test(name) ? name : `${name}${ext}`)) ?? readDoc(join(dir, `${name}${ext}.gz`));
  let text = source.replace(/^([^%\n]*?)\\(input|include)\s*\{([\w./-]+)\}/gm, (all, before: string, _cmd: string, name: string) => {
    const inner = local(name, '.tex');
    return inner !== undefined && !/\\documentclass/.test(inner) ? `${before}${inner}` : all;
  });
  const bib = /\\bibliography\{([\w./-]+)\}/.exec(text)?.[1];
  if (bib && !bib.includes(',')) {
    const data = local(bib, '.bib');
    if (data !== undefined && data.length < 30_000) text = `\\begin{filecontents*}{${bib}.bib}\n${data}\n\\end{filecontents*}\n${text}`;
  }
  return text;
}

/** Self-contained documents: one file (inputs pasted in), no images or bibliography databases we cannot send. */
function candidates(docRoot: string): Doc[] {
  const docs: Doc[] = [];
  const perDir = new Map<string, number>();
  const seen = new Set<string>();
  for (const path of texFiles(docRoot)) {
    const dir = path.slice(docRoot.length).split('/').slice(0, 3).join('/');
    if ((perDir.get(dir) ?? 0) >= PER_DIR) continue;
    const source = inlineInputs(readDoc(path), path);
    if (!source || source.length < 300 || source.length > 40_000) continue;
    if (!/^\s*\\documentclass/m.test(source) || !/\\begin\{document\}/.test(source) || !/\\end\{document\}/.test(source)) continue;
    if (/\\(input|include|includegraphics|addbibresource|printbibliography|lstinputlisting|verbatiminput|includepdf|includeonly|InputIfFileExists|externaldocument|write18)\b/.test(source)) continue;
    if (/\\bibliography\{/.test(source) && !/\\begin\{filecontents\*\}/.test(source)) continue;
    const hash = createHash('sha1').update(source).digest('hex');
    if (seen.has(hash)) continue;
    seen.add(hash);
    const engine: Compiler = /\\usepackage(\[[^\]]*\])?\{(luacode|luatexja|lua[\w-]*)\}|\\documentclass(\[[^\]]*\])?\{ltj/.test(source)
      ? 'lualatex'
      : /\\usepackage(\[[^\]]*\])?\{[^}]*(fontspec|polyglossia|unicode-math|xltxtra|xunicode)/.test(source)
        ? 'xelatex'
        : 'pdflatex';
    docs.push({ path, source, engine });
    perDir.set(dir, (perDir.get(dir) ?? 0) + 1);
  }
  return docs;
}

/**
 * One document per body markup: KOMA-Script ships one example four times (German and English,
 * with and without a patch), the same commands in the same order, and four copies would count
 * one diagnosis four times. The first of each stays.
 */
function distinct(docs: Doc[]): Doc[] {
  const seen = new Set<string>();
  return docs.filter((doc) => {
    const body = doc.source.slice(bodyStart(doc.source)).replace(/(?<!\\)%.*$/gm, '');
    const markup = [...body.matchAll(/\\[A-Za-z]+|\\begin\s*\{[^}]*\}/g)].map((m) => m[0]).join(' ');
    const key = createHash('sha1').update(markup).digest('hex');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------- mutations

const NOT_WORTH_DELETING = /^(inputenc|fontenc|lmodern|microtype|geometry|hyperref|babel|polyglossia|fontspec|ifthen|etoolbox|xkeyval|kvoptions|calc|fix-cm|fixltx2e|textcomp|times|mathptmx|helvet|courier|palatino|parskip|setspace|a4wide|a4|fullpage|showframe|blindtext|lipsum|bookmark|cmap|ucs|url|iftex|ifpdf|ifxetex|ifluatex|xspace)$/;

function usepackages(source: string): Array<{ line: number; names: string[]; text: string }> {
  return source.split('\n').flatMap((text, i) => {
    const m = /^\s*\\usepackage\s*(\[[^\]]*\])?\s*\{([^}]+)\}\s*(%.*)?$/.exec(text);
    return m?.[2] ? [{ line: i, names: m[2].split(',').map((n) => n.trim()).filter(Boolean), text }] : [];
  });
}

function typo(name: string): string {
  // Drop a letter from the middle: the commonest slip, and never the same name.
  const at = Math.floor(name.length / 2);
  return name.slice(0, at) + name.slice(at + 1);
}

/** Percent with one decimal. */
function share(k: number, of: number): number {
  return of === 0 ? 0 : Math.round((1000 * k) / of) / 10;
}

function bodyStart(source: string): number {
  return source.indexOf('\\begin{document}') + '\\begin{document}'.length;
}

const MATH_ONLY = /^\\(alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|lambda|mu|nu|xi|pi|rho|sigma|tau|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|Psi|Omega|frac|sum|int|prod|sqrt|infty|leq|geq|neq|cdot|times|partial|in|subset|mathbb|mathrm|mathbf|mathcal|le|ge|to|rightarrow|mapsto|forall|exists|ell|nabla|approx|equiv|pm|circ|mid)(?![A-Za-z])/;

function mutations(doc: Doc, cat: TexCatalog): Array<() => Mutant | undefined> {
  // Deletions of \usepackage lines come first; callers rotate through the rest.
  const { source } = doc;
  const out: Array<() => Mutant | undefined> = [];
  const mk = (kind: Kind, text: string, truth: Mutant['truth']): Mutant => ({ doc, kind, source: text, truth, id: `${doc.path}#${kind}#${text.length}` });
  const lines = source.split('\n');
  const pkgs = usepackages(source);
  // Delete a \usepackage: several tries, the compile decides which break the document.
  for (const u of pkgs.filter((p) => p.names.some((n) => !NOT_WORTH_DELETING.test(n) && cat.has(n))).slice(0, 3)) {
    const name = u.names.find((n) => !NOT_WORTH_DELETING.test(n) && cat.has(n)) as string;
    out.push(() => {
      const rest = u.names.filter((n) => n !== name);
      const copy = [...lines];
      copy[u.line] = rest.length ? u.text.replace(/\{[^}]+\}/, `{${rest.join(',')}}`) : '';
      return mk('delete_usepackage', copy.join('\n'), { class: '?', symbol: null, package: name });
    });
  }
  const spell = pkgs.flatMap((u) => u.names).find((n) => n.length >= 5 && cat.has(n) && !cat.has(typo(n)));
  if (spell) {
    out.push(() => {
      const u = pkgs.find((p) => p.names.includes(spell)) as (typeof pkgs)[number];
      const copy = [...lines];
      copy[u.line] = u.text.replace(new RegExp(`(?<=[{,]\\s*)${spell}(?=\\s*[,}])`), typo(spell));
      return mk('misspell_package', copy.join('\n'), { class: 'missing_package', symbol: typo(spell), package: spell });
    });
  }
  const cls = /\\documentclass\s*(\[[^\]]*\])?\s*\{([^}]+)\}/.exec(source)?.[2]?.trim();
  if (cls && cls.length >= 5 && !cat.hasClass(typo(cls))) {
    out.push(() => mk('misspell_class', source.replace(/(\\documentclass\s*(\[[^\]]*\])?\s*\{)[^}]+\}/, `$1${typo(cls)}}`), { class: 'missing_document_class', symbol: typo(cls), package: null, class_name: cls }));
  }
  const env = /\\begin\{(itemize|enumerate|description|center|quote|quotation|tabular|figure|table|equation|align|flushleft|minipage)\}/.exec(source.slice(bodyStart(source)))?.[1];
  if (env) {
    const bad = env.slice(0, 2) + env[3] + env[2] + env.slice(4);
    if (cat.definers(bad, 'environment').length === 0) {
      out.push(() => {
        const start = bodyStart(source);
        const body = source.slice(start).replace(`\\begin{${env}}`, `\\begin{${bad}}`).replace(`\\end{${env}}`, `\\end{${bad}}`);
        return mk('misspell_environment', source.slice(0, start) + body, { class: 'undefined_environment', symbol: bad, package: null });
      });
    }
  }
  const brace = /\\(textbf|emph|textit|texttt|section|subsection)\{[^{}\n$]{3,60}\}/.exec(source.slice(bodyStart(source)));
  if (brace) {
    out.push(() => {
      const at = bodyStart(source) + brace.index;
      const text = source.slice(0, at) + brace[0].slice(0, -1) + source.slice(at + brace[0].length);
      return mk('drop_brace', text, { class: 'runaway_argument', symbol: `\\${brace[1]}`, package: null });
    });
  }
  const math = [...source.slice(bodyStart(source)).matchAll(/(?<![\\$])\$([^$\n]{1,60})\$(?!\$)/g)].find((m) => /[\^_]|\\[A-Za-z]/.test(m[1] ?? ''));
  if (math?.[1]) {
    const inner = math[1];
    const token = /[\^_]|\\[A-Za-z]+/.exec(inner)?.[0];
    if (token && (token === '^' || token === '_' || MATH_ONLY.test(token))) {
      out.push(() => {
        const at = bodyStart(source) + (math.index ?? 0);
        return mk('drop_math', source.slice(0, at) + inner + source.slice(at + math[0].length), { class: 'missing_math_mode', symbol: token, package: null });
      });
    }
  }
  out.push(() => mk('delete_begin_document', source.replace('\\begin{document}', ''), { class: 'missing_begin_document', symbol: '\\begin{document}', package: null }));
  // Loaded, not named in a comment: IEEEtran's sample has `% \usepackage[pdftex]{graphicx}`, and
  // there `\includegraphics` is undefined, which the diagnosis rightly says.
  if (/\\usepackage\s*(\[[^\]]*\])?\s*\{[^}]*\bgraphicx?\b/.test(source.replace(/(?<!\\)%.*$/gm, ''))) {
    out.push(() => mk('missing_image', source.replace('\\begin{document}', '\\begin{document}\n\\includegraphics{missing-figure}\n'), { class: 'missing_asset', symbol: 'missing-figure', package: null }));
  }
  out.push(() => mk('undefined_command', source.replace('\\begin{document}', '\\begin{document}\n\\qzxundefinedmacro\n'), { class: 'undefined_command', symbol: '\\qzxundefinedmacro', package: null }));
  out.push(() => mk('extra_brace', source.replace('\\begin{document}', '\\begin{document}\n}\n'), { class: 'unbalanced_braces', symbol: '}', package: null }));
  out.push(() => mk('missing_input', source.replace('\\begin{document}', '\\begin{document}\n\\input{missing-chapter}\n'), { class: 'missing_asset', symbol: 'missing-chapter.tex', package: null }));
  const command = /\\(textbf|emph|textit|section|subsection|footnote)\{/.exec(source.slice(bodyStart(source)));
  if (command?.[1]) {
    const bad = `\\${command[1]}${command[1].at(-1)}`;
    out.push(() => {
      const at = bodyStart(source) + command.index;
      return mk('misspell_command', source.slice(0, at) + bad + source.slice(at + command[0].length - 1), { class: 'undefined_command', symbol: bad, package: null });
    });
  }
  out.push(() => mk('unicode_char', source.replace('\\begin{document}', '\\begin{document}\nSnow \u2603 here.\n'), { class: 'unsupported_unicode', symbol: 'U+2603', package: null }));
  return out;
}

// ---------------------------------------------------------------- scoring

/** What TeX itself says broke, read independently of the diagnosis code: name and kind. */
function failingName(log: string): { class: string; symbol: string } | undefined {
  const first = primaryError(parseErrors(log));
  if (!first) return undefined;
  if (/^Undefined control sequence/.test(first.message)) {
    const token = /(\\[A-Za-z@]+)\s*$/.exec((first.context[0]?.read ?? '').replace(/^l\.\d+ /, ''))?.[1];
    return token ? { class: 'undefined_command', symbol: token } : undefined;
  }
  const env = /Environment (\S+) undefined/.exec(first.message)?.[1];
  return env ? { class: 'undefined_environment', symbol: env } : undefined;
}

/** Wall time of each diagnosis that ran probe compiles, and how many probes. */
const probeTimes: number[] = [];
let probeCount = 0;
const refused = { caller: 0, node: 0 };
/** The service's probe budget, with its default settings. */
const budget = new WindowProbeBudget(probeSettings(), systemClock);
/** A probe's wall clock, as in the service: only a safety net. */
const PROBE_WALL_MS = 20_000;

async function analyse(runner: TexRunner, m: Mutant, source: string, engine: Compiler, result: TexResult): Promise<LogAnalysis | undefined> {
  if (result.outcome === 'ok') return analyzeMissingCharacters(result.log, engine, { source });
  let probes = 0;
  const started = performance.now();
  // As the service does: the project's files go to the diagnosis and with every probe.
  const files = m.doc.files;
  const analysis = await diagnose(result.log, engine, {
    source,
    ...(files ? { files } : {}),
    probe: (probe, compiler) =>
      budget
        .run(m.id, ({ cpuSeconds }) => {
          probes++;
          return runner.run({ source: probe, compiler, timeoutMs: PROBE_WALL_MS, cpuSeconds, maxFileBytes: 16 * 1024 * 1024, ...(files ? { files } : {}) });
        })
        .catch((err: unknown) => {
          if (err instanceof ProbeRefused) refused[err.reason]++;
          throw err;
        }),
  });
  if (probes > 0) {
    probeTimes.push(performance.now() - started);
    probeCount += probes;
  }
  return analysis;
}

interface Scored {
  m: Mutant;
  d?: Diagnosis;
  fixed?: boolean;
  rounds?: number;
  note?: string;
  /** The mutant's compile outcome, and the fix loop's last: a miss says whether TeX timed out. */
  outcome?: string;
  last?: string;
}

async function fixLoop(runner: TexRunner, m: Mutant, d: Diagnosis): Promise<{ fixed: boolean; rounds: number; last?: string }> {
  let source = m.source;
  let engine = m.doc.engine;
  let diagnosis: Diagnosis | undefined = d;
  for (let round = 1; round <= FIX_ROUNDS; round++) {
    if (!diagnosis?.suggested_package) return { fixed: false, rounds: round - 1 };
    ({ source, engine } = applyFix(source, engine, diagnosis));
    const result = await compile(runner, source, engine, m.doc);
    if (result.outcome === 'ok') return { fixed: true, rounds: round };
    if (result.outcome !== 'failed') return { fixed: false, rounds: round, last: result.outcome };
    diagnosis = (await analyse(runner, m, source, engine, result))?.diagnosis;
  }
  return { fixed: false, rounds: FIX_ROUNDS };
}

/** One CPU burner per core, in a second process: `stress`-like load while the bench runs. */
function startLoad(): ChildProcess[] {
  const burn = `const end = Date.now() + ${BURN_MAX_MS}; let x = 0; while (Date.now() < end) x = (x + 1) % 1e9;`;
  return Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', burn], { stdio: 'ignore' }));
}

async function main(): Promise<void> {
  const started = performance.now();
  const burners = LOAD ? startLoad() : [];
  if (LOAD) console.log(`load: ${burners.length} CPU burners (pids ${burners.map((b) => b.pid).join(', ')})`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const b of burners) b.kill('SIGKILL');
      process.exit(130);
    });
  }
  try {
    const images = servedImages({ sandbox: true, texlive: texliveSettings() });
    if (images.length === 0) throw new Error('No TeX image is ready: `npm run setup` builds the years QUIRE_TEXLIVE names.');
    for (const image of images) await measure(image);
    console.log(`time     ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  } finally {
    for (const b of burners) b.kill('SIGKILL');
  }
}

async function measure(image: TexImage): Promise<void> {
  const started = performance.now();
  probeTimes.length = 0;
  probeCount = 0;
  refused.caller = refused.node = 0;
  const docRoot = isAbsolute(DOC_DIR) ? DOC_DIR : join(image.root, DOC_DIR);
  console.log(`\n== TeX Live ${image.year} (${image.texliveVersion}, image ${image.root})`);
  // The package index is the service's: the default year's (tex/diagnosis/catalog.ts).
  const cat = await ensureCatalog(CACHE_DIR);
  if (!cat) throw new Error('TeX Live index unavailable');
  console.log(`index: ${cat.size} packages and classes (built in ${cat.buildMs} ms)`);
  const runner = await corpusRunner(image);
  try {
    const pool1 = distinct([...candidates(docRoot), ...(EXTRA ? [...projectDocs(), ...(await galleryDocs())] : [])]);
    if (process.env.BENCH_LIST === '1') {
      for (const d of pool1) console.log(d.engine, d.path);
      return;
    }
    console.log(`${pool1.length} self-contained documents under ${docRoot}; ${Number.isFinite(MAX_DOCS) ? `compiling until ${MAX_DOCS} compile cleanly` : 'compiling each: those that compile cleanly are the set'}`);
    const clean: Doc[] = [];
    // Which documents compile cleanly is remembered between runs (keyed by content), to save the first phase.
    const memoPath = join(CACHE_DIR, 'bench-diagnosis-clean.json');
    const memo: Record<string, boolean> = (() => {
      try {
        return JSON.parse(readFileSync(memoPath, 'utf8')) as Record<string, boolean>;
      } catch {
        return {};
      }
    })();
    const key = (doc: Doc) => createHash('sha1').update(`${image.year}\n${image.builtAt}\n${doc.engine}\n${doc.path}\n${doc.source}`).digest('hex');
    for (let i = 0; i < pool1.length && clean.length < MAX_DOCS; i += LANES * 4) {
      const batch = pool1.slice(i, i + LANES * 4);
      const ok = await pool(batch, LANES, async (doc) => {
        memo[key(doc)] ??= (await compile(runner, doc.source, doc.engine, doc)).outcome === 'ok';
        return memo[key(doc)] ? doc : undefined;
      });
      mkdirSync(CACHE_DIR, { recursive: true });
      writeFileSync(memoPath, JSON.stringify(memo));
      clean.push(...ok.filter((d): d is Doc => d !== undefined).slice(0, MAX_DOCS - clean.length));
      process.stderr.write(`  ${Math.min(i + batch.length, pool1.length)} compiled, ${clean.length} clean\n`);
    }
    console.log(`${clean.length} documents compile cleanly (${clean.filter((d) => d.engine !== 'pdflatex').length} with xelatex/lualatex)`);

    // Mutants: per document the \usepackage deletions first (the case this bench is about), then the other kinds in turn.
    const scored: Scored[] = [];
    let discarded = 0;
    await pool(clean, LANES, async (doc) => {
      const all = mutations(doc, cat).map((make) => make()).filter((m): m is Mutant => m !== undefined);
      const deletions = all.filter((m) => m.kind === 'delete_usepackage');
      const others = all.filter((m) => m.kind !== 'delete_usepackage');
      // Rotate the other kinds by document, so every kind is exercised across the set.
      const offset = parseInt(createHash('sha1').update(doc.path).digest('hex').slice(0, 6), 16) % Math.max(1, others.length);
      const ordered = [...deletions, ...others.slice(offset), ...others.slice(0, offset)];
      let deletes = 0;
      let made = 0;
      for (const m of ordered) {
        if (made >= PER_DOC) break;
        if (m.kind === 'delete_usepackage' && deletes >= DELETES_PER_DOC) continue;
        const result = await compile(runner, m.source, m.doc.engine, m.doc);
        if (m.kind === 'delete_usepackage') {
          const truth = result.outcome === 'failed' ? failingName(result.log) : undefined;
          if (!truth) {
            discarded++;
            continue;
          }
          m.truth = { ...truth, package: m.truth.package };
          deletes++;
        } else if (result.outcome === 'ok' && (m.kind !== 'unicode_char' || !/Missing character/.test(result.log))) {
          // Nothing broke (for ☃ under xelatex/lualatex: the font has it).
          discarded++;
          continue;
        }
        made++;
        const d = (await analyse(runner, m, m.source, m.doc.engine, result))?.diagnosis;
        const entry: Scored = { m, ...(d ? { d } : {}), outcome: result.outcome };
        if (d?.suggested_package && m.truth.package) Object.assign(entry, await fixLoop(runner, m, d));
        scored.push(entry);
      }
      process.stderr.write(`  ${scored.length} mutants scored\n`);
    });

    const n = scored.length;
    const docs = new Set(scored.map((s) => s.m.doc.path)).size;
    const pct = (k: number, of: number) => (of === 0 ? 'n/a' : `${((100 * k) / of).toFixed(1)}%`);
    const classOk = scored.filter((s) => s.d?.error_class === s.m.truth.class).length;
    const symbolOk = scored.filter((s) => (s.d?.symbol ?? null) === s.m.truth.symbol).length;
    const withPackage = scored.filter((s) => s.m.truth.package !== null);
    const packageOk = withPackage.filter((s) => s.d?.suggested_package === s.m.truth.package).length;
    const fixed = withPackage.filter((s) => s.fixed).length;
    const wrong = scored.filter((s) => s.d && (s.d.error_class !== s.m.truth.class || (s.d.suggested_package !== undefined && s.m.truth.package !== null && s.fixed === false && s.d.suggested_package !== s.m.truth.package)));
    const byKind = new Map<string, Scored[]>();
    for (const s of scored) byKind.set(s.m.kind, [...(byKind.get(s.m.kind) ?? []), s]);

    console.log(`\n${n} mutants of ${docs} real documents (${discarded} mutants discarded: compiled anyway, or the deleted package left no undefined name)`);
    for (const [kind, list] of byKind) {
      console.log(`  ${kind.padEnd(22)} ${String(list.length).padStart(4)}  class ${pct(list.filter((s) => s.d?.error_class === s.m.truth.class).length, list.length)}  symbol ${pct(list.filter((s) => (s.d?.symbol ?? null) === s.m.truth.symbol).length, list.length)}`);
    }
    console.log(`class    ${pct(classOk, n)}  (target ≥ 95%)`);
    console.log(`symbol   ${pct(symbolOk, n)}  (target ≥ 90%)`);
    console.log(`package  ${pct(packageOk, withPackage.length)} of ${withPackage.length} mutants that lost a package  (target ≥ 90%)`);
    for (const kind of ['delete_usepackage', 'misspell_package'] as const) {
      const list = withPackage.filter((x) => x.m.kind === kind);
      console.log(`         ${kind}: ${pct(list.filter((x) => x.d?.suggested_package === x.m.truth.package).length, list.length)} of ${list.length} named exactly, ${pct(list.filter((x) => x.fixed).length, list.length)} repaired`);
    }
    console.log(`wrong    ${pct(wrong.length, n)}  (target ≤ 1%)`);
    console.log(`fix loop ${pct(fixed, withPackage.length)} repaired by applying suggested_package (≤ ${FIX_ROUNDS} rounds)  (target ≥ 90%)`);
    const deleted = withPackage.filter((x) => x.m.kind === 'delete_usepackage');
    const misspelt = scored.filter((x) => x.m.kind === 'misspell_package' || x.m.kind === 'misspell_class');
    const namedMisspelling = (x: Scored) =>
      x.m.kind === 'misspell_package' ? x.d?.suggested_package === x.m.truth.package : (x.d?.suggested_fix ?? '').includes(`\\documentclass{${x.m.truth.class_name ?? ''}}`);
    const headline = {
      deleted_named: share(deleted.filter((x) => x.d?.suggested_package === x.m.truth.package).length, deleted.length),
      misspelt_named: share(misspelt.filter(namedMisspelling).length, misspelt.length),
      wrong: share(wrong.length, n),
      fix_loop: share(fixed, withPackage.length),
    };
    console.log(`issue 24 deleted package named ${headline.deleted_named}% of ${deleted.length} (≥ 95%), misspelt package/class named ${headline.misspelt_named}% of ${misspelt.length} (100%), wrong ${headline.wrong}% (≤ 1%), fix loop ${headline.fix_loop}% (≥ 90%)`);
    const confidences = new Map<string, number>();
    for (const s of scored) if (s.d?.confidence) confidences.set(s.d.confidence, (confidences.get(s.d.confidence) ?? 0) + 1);
    console.log(`confidence of first suggestions: ${[...confidences].map(([c, k]) => `${c} ${k}`).join(', ') || 'none'}`);
    const sorted = [...probeTimes].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
    console.log(`probes   ${probeTimes.length} diagnoses probed (${probeCount} probe compiles, ${refused.caller} refused by the per-caller cap, ${refused.node} by the node reserve); time per diagnosis median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
    if (JSON_OUT) writeFileSync(JSON_OUT.replace(/(\.json)?$/, `-${image.year}$1`), JSON.stringify({ texlive: image.year, load: LOAD, mutants: n, ...headline, probes: probeCount, refused }, null, 2));
    console.log(`time     ${((performance.now() - started) / 1000).toFixed(0)} s (TeX Live ${image.year})`);
    const misses = scored.filter((s) => s.d?.error_class !== s.m.truth.class || (s.d?.symbol ?? null) !== s.m.truth.symbol || (s.m.truth.package !== null && (s.d?.suggested_package !== s.m.truth.package || !s.fixed)) || (s.m.kind === 'misspell_class' && !namedMisspelling(s)));
    if (process.env.BENCH_VERBOSE !== '0') {
      for (const s of misses) {
        const where = s.m.doc.path.startsWith(docRoot) ? s.m.doc.path.slice(docRoot.length + 1) : s.m.doc.path;
        const fix = s.m.kind === 'misspell_class' ? { fix: s.d?.suggested_fix } : {};
        // The compile's outcome when it was not an ordinary failure (a timeout under load is no diagnosis fault).
        const outcomes = { ...(s.outcome !== 'failed' ? { compile: s.outcome } : {}), ...(s.last ? { fix_compile: s.last } : {}) };
        console.log(`  miss ${s.m.kind} ${where}: expected ${JSON.stringify(s.m.truth)} got ${JSON.stringify({ class: s.d?.error_class, symbol: s.d?.symbol, package: s.d?.suggested_package, fixed: s.fixed, ...fix, ...outcomes })}`);
      }
    }
  } finally {
    await runner.close();
  }
}

await main();
