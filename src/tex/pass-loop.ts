// The pass loop of one TeX job in its prepared sandbox (the runner, runner.ts, prepares it and
// ends it): the engine as many passes as the document needs (bibtex/biber/makeindex in
// between, passes.ts), each command under the job's limits, deadline and a disk watch; then
// the PDF's pages and active content (pdf/pdfread.ts in process; pdf/inspect.ts, one qpdf, when
// it gives up), the output step, and the warnings of the last transcript.
import { createHash } from 'node:crypto';
import { engineArgs, FORMAT, FORMAT_ENGINE, formatEngineArgs, MEMORY_BYTES, PAUSED_CPU_SECONDS, PROCESSES, WARM_CPU_SECONDS, type TexJob, type TexResult, type TexStages } from './job.js';
import { formatCoreMap, type JobFormat } from './caches/job-start.js';
import { goLine, PAUSED_DRIVER, PAUSED_ENGINE } from './caches/paused.js';
import { judgeHelper, planHelpers, type ReadFile } from './passes.js';
import { missingDatabases } from './project/bib-veto.js';
import { runOutputStep } from './output/steps.js';
import type { WarmValidators } from './output/warm-validator.js';
import { inspectInSandbox } from './pdf/inspect.js';
import { inspectPdf, type PdfInspection } from './pdf/pdfread.js';
import type { SandboxPool } from './sandbox/pool.js';
import type { ProcessLimits } from './sandbox/sandbox.js';
import type { Exec, Session } from './sandbox/session.js';
import { collectErrors, collectWarnings, type BibliographyProblem } from './warnings.js';
import { LOG_HEAD_BYTES, LOG_TAIL_BYTES, MAIN, WALK_ENTRIES, Workspace } from './sandbox/workspace.js';

const MAX_PASSES = 5;
/** What LaTeX and its packages print when another pass would change the document. */
const RERUN_ASKED = /Rerun to get|Please rerun|Please \(re\)run|may have changed\. Rerun|Rerun LaTeX|rerun LaTeX/i;
/**
 * minted 3's first pass (no highlight cache yet) prints placeholders and highlights every
 * listing in one latexminted call at its end: the next pass typesets them (latexmk reruns too).
 */
const MINTED_BATCH = /^runsystem\(latexminted batch\b.*\)\.\.\.executed/m;
/** rerunfilecheck's warning with its continuation line, which says "Rerun to get …". */
const RERUNFILECHECK_WARNING = /^Package rerunfilecheck Warning: File `([^']+)' has changed\.\n\(rerunfilecheck\) +Rerun[^\n]*$/gm;
/** Files biblatex writes for biber (and reads back only to compare): biber's own key decides. */
const HELPER_CONTROL_FILES = /\.(bcf|run\.xml)$/;
const WATCH_MS = 250;
/** Helper files (aux, bcf, idx, fls, blg) read back for the rerun logic. */
const HELPER_CAP = 64 * 1024 * 1024;
/** Files hashed between passes; larger ones count as unchanged. */
const SNAPSHOT_CAP = 16 * 1024 * 1024;
/**
 * A document that reads back what its first pass writes (contents, lists, cross-references)
 * and runs no helper in between (any other command ends a waiting engine): its second pass
 * can start warm.
 */
export function rerunLikely(sources: string[]): boolean {
  const reads = /\\(?:tableofcontents|listoffigures|listoftables|ref|pageref|eqref|autoref|[cC]ref|nameref)\b/;
  const helpers = /\\(?:cite|nocite|bibliography|printbibliography|addbibresource|makeindex|printindex|makeglossaries)/;
  return sources.some((text) => reads.test(text)) && !sources.some((text) => helpers.test(text));
}

/**
 * A document that names its own font maps: without a `+` or `=`, \pdfmapfile replaces
 * pdftex.map, which a warm pdflatex or lualatex has already read (LOAD_FONT_MAP in job.ts).
 * It runs cold.
 */
export function setsFontMap(sources: string[]): boolean {
  return sources.some((text) => /\\pdfmap(?:file|line)\b|\\pdfextension\s*map(?:file|line)\b/.test(text));
}

/** A pass read the core font map and opened a font only the whole map has: the job runs again with that (font-map.ts). */
export class WholeMapNeeded extends Error {}

export class Killed extends Error {
  constructor(
    readonly outcome: 'timeout' | 'file_too_large' | 'refused',
    readonly file?: string,
    readonly problem?: string,
  ) {
    super(outcome);
  }
}

function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Total bytes in the workspace, its largest file, and whether it holds too many entries. */
export async function measure(workspace: Workspace): Promise<{ total: number; largest: string; overflow: boolean }> {
  const { files, overflow } = await workspace.files();
  let total = 0;
  let largest = { name: '', size: -1 };
  for (const file of files) {
    total += file.size;
    if (file.size > largest.size) largest = file;
  }
  return { total, largest: largest.name, overflow };
}

/** The job's files, owned by the slot uid (or by us when the service is unprivileged). */
export function workspaceOf(session: Session): Workspace {
  return new Workspace(session.dir, session.uid ?? process.getuid?.() ?? 0);
}

/** Where a job's passes stand: the runner reads them back for its result (and its stages). */
export interface PassState {
  passes: number;
  stages: TexStages;
  /** The first pass was the paused engine's. */
  paused: boolean;
  /** No pass may read the core font map (the job's second attempt). */
  wholeMap: boolean;
}

/** What a job's passes run with: the runner's pool and options, the job's sandbox, and the format it started from. */
export interface PassRun {
  pool: SandboxPool;
  session: Session;
  job: TexJob;
  /** The preamble format the first pass starts from (a job started from a format or a primed sandbox). */
  format: JobFormat | undefined;
  /** Run lualatex with LUA_INIT (pool.ts hardenLua). */
  hardenLua: boolean;
  /** Warm PDF/A-1b validators for the output step (none: Preflight runs cold). */
  validators: WarmValidators | undefined;
  state: PassState;
}

/** The job's passes in its prepared sandbox, then its PDF read and checked: the result but its pass count and duration. */
export async function runPasses(run: PassRun): Promise<Omit<TexResult, 'passes' | 'durationMs'>> {
  const compileStart = performance.now();
  const { stages } = run.state;
  stages.tex = 0;
  const result = await passes(run);
  stages.reads = performance.now() - compileStart - stages.tex - (stages.inspect ?? 0);
  return result;
}

/** What TeX prints when it cannot load its format: it then stops before it writes a transcript. */
const FORMAT_FAILURE = /Fatal format file error|I can't find the format file/;

async function passes(run: PassRun): Promise<Omit<TexResult, 'passes' | 'durationMs'>> {
  const { pool, session, job, format, state, validators } = run;
  const { stages } = state;
  const timed = async <T>(work: Promise<T>) => {
    const start = performance.now();
    try {
      return await work;
    } finally {
      stages.tex! += performance.now() - start;
    }
  };
  const workspace = workspaceOf(session);
  const deadline = performance.now() + job.timeoutMs;
  const exec = (argv: string[], fileBytes?: number) => execIn(pool, session, workspace, job, deadline, argv, fileBytes);
  // Every read of a file the job wrote goes through the workspace reader.
  const read: ReadFile = (name) => workspace.readCapped(name, HELPER_CAP);
  const sources = [job.source, ...(job.files ?? []).filter((f) => /\.(tex|sty|cls)$/.test(f.name)).map((f) => f.data.toString('utf8'))];
  const done = new Map<string, string>();
  const problems = new Map<string, BibliographyProblem[]>();
  let log = '';

  while (state.passes < Math.min(MAX_PASSES, job.maxPasses ?? MAX_PASSES)) {
    const before = await snapshot(workspace);
    state.passes++;
    // The pass is a warm engine's when the sandbox started the job's engine; on the first
    // pass of a document that will likely need a second, that one starts meanwhile.
    // A paused preamble serves the first pass only; its sandbox starts no engine for a second.
    const paused = session.engine === PAUSED_ENGINE;
    // Which font map a warm engine read: the core map for warm pdflatex and for a format that allows it.
    const coreMap = !paused && (format ? formatCoreMap(pool, session, format) : pool.coreMap(session, job.compiler)) !== undefined;
    // Engines started ahead of time halt on errors: a job that goes on past them starts its own.
    const warm = paused || (!job.continueOnError && session.engine === (format ? FORMAT_ENGINE : job.compiler) && !(job.compiler !== 'xelatex' && setsFontMap(sources)) && !(coreMap && state.wholeMap));
    // A second engine already waiting (a primed format's) is used whatever the guess.
    const again = warm && !paused && state.passes === 1 && (rerunLikely(sources) || session.next);
    const argv = format ? formatEngineArgs(true) : engineArgs(job.compiler, run.hardenLua, pool.fmt(session, job.compiler), !job.continueOnError);
    const pass = await timed(execIn(pool, session, workspace, job, deadline, argv, undefined, warm, again, paused ? goLine(new Date()) : undefined));
    const fls = (await read(`${MAIN}.fls`))?.toString('utf8') ?? '';
    // A warm engine read the core font map: a pass that opened a font only the whole map has runs again with it.
    if (warm && coreMap && pool.fontMaps?.needsWholeMap(fls)) throw new WholeMapNeeded();
    const transcript = await workspace.readLog(`${MAIN}.log`);
    const output = () => (warm ? session.passOutput() : Promise.resolve(pass.output));
    if (transcript === null) {
      // No transcript and no banner means TeX never started: our fault, not the document's.
      const printed = await output();
      if (!/^This is /m.test(printed) || FORMAT_FAILURE.test(printed)) throw new Error(`TeX did not start: ${printed.slice(0, 2000)}`);
      return { outcome: 'refused', log: '', problem: `${MAIN}.log is missing: the document removed its own transcript` };
    }
    // A format TeX cannot load (a broken inflated copy, one gone under a later pass) is ours too,
    // even with a transcript there: that one is an earlier pass's, which TeX never reached.
    if (pass.code !== 0) {
      const printed = await output().catch(() => '');
      if (FORMAT_FAILURE.test(printed)) throw new Error(`TeX did not start (pass ${state.passes}): ${printed.slice(0, 2000)}`);
    }
    log = transcript;
    // The paused engine really ran the first pass (its driver is in the transcript), or the sandbox ran it cold.
    if (paused && transcript.includes(`(./${PAUSED_DRIVER}`)) state.paused = true;
    // A pass may end without pages (a document that only prints a biblatex list before biber ran).
    const empty = pass.code === 0 && /^No pages of output\.$/m.test(log);
    // Past errors, a pass counts when this pass itself wrote the output (not a stale PDF of an earlier one).
    const recovered = job.continueOnError === true && pass.code !== 0 && /^Output written on main\.(?:pdf|xdv) /m.test(log);
    if ((pass.code !== 0 && !recovered) || (!empty && (await workspace.size(`${MAIN}.pdf`)) === null)) return { outcome: 'failed', log };

    // Helpers run when their input changed since they last ran; a changed output forces a pass.
    let changed = false;
    for (const helper of await planHelpers(MAIN, { read, log, fls, sources, done })) {
      // latexmk's veto: a bibtex whose databases are not all there does not run (project/bib-veto.ts).
      const absent = await missingDatabases(helper, read, (command) => timed(exec(command)));
      if (absent.length > 0) {
        problems.set(helper.id, absent.map((name) => ({ tool: helper.tool, message: `cannot find ${name}`, missing: name })));
        continue;
      }
      const outputs = await Promise.all(helper.outputs.map(async (name) => (await read(name)) ?? Buffer.alloc(0)));
      const result = await timed(exec(helper.argv));
      const verdict = await judgeHelper(helper, result, read);
      if (verdict.fatal) return { outcome: 'failed', log: `${log}\n${verdict.fatal}` };
      const missing = (verdict.missing ?? []).map((name) => ({ tool: helper.tool, message: `cannot find ${name}`, missing: name }));
      problems.set(helper.id, [...missing, ...verdict.problems.map((message) => ({ tool: helper.tool, message }))]);
      for (const [i, name] of helper.outputs.entries()) {
        if (!((await read(name)) ?? Buffer.alloc(0)).equals(outputs[i]!)) changed = true;
      }
      // splitindex writes (and runs makeindex on) files whose names only it knows.
      if (helper.outputs.length === 0) changed = true;
    }
    if (!changed && (empty || !(await needsRerun(workspace, log, before)))) break;
  }
  const pdf = await workspace.read(`${MAIN}.pdf`, job.maxFileBytes);
  if (pdf === 'over') return { outcome: 'file_too_large', log, file: `${MAIN}.pdf` };
  if (!pdf) return { outcome: 'failed', log };
  const inspectStart = performance.now();
  // TeX's own PDF is read in-process; what that reader cannot vouch for goes to qpdf.
  const inspected: PdfInspection | { unmeasurable: string } = inspectPdf(pdf, { pdfa: job.output?.pdfStandard !== undefined }) ?? (await inspectInSandbox(exec, workspace));
  stages.inspect = performance.now() - inspectStart;
  if ('unmeasurable' in inspected) return { outcome: 'unmeasurable', log: `${log}\nThe PDF could not be measured: ${inspected.unmeasurable}` };
  const { pages, active } = inspected;
  if (active.length > 0) return { outcome: 'active_content', log, problem: active.join(', ') };
  // pdflatex prints an empty font slot as the raw byte: the glyph check reads the log's bytes.
  const raw = job.compiler === 'pdflatex' && /^Missing character: /m.test(log) ? await workspace.read(`${MAIN}.log`, LOG_HEAD_BYTES + LOG_TAIL_BYTES) : null;
  const warnings = collectWarnings(log, raw instanceof Buffer ? raw : null, job.compiler, [...problems.values()].flat(), job.source);
  const errors = job.continueOnError ? { errors: collectErrors(log) } : {};
  if (job.output) {
    const step = {
      exec, workspace, dir: session.dir, maxFileBytes: job.maxFileBytes, pages, facts: inspected.pdfa, validators, deadline, signal: job.signal,
      scope: job.preamble?.scope ?? job.fairness?.caller, inspect: (file: string) => inspectInSandbox(exec, workspace, file),
    };
    const done = await runOutputStep(step, job.output, `${MAIN}.pdf`);
    if (!done.ok && done.kind === 'active') return { outcome: 'active_content', log, problem: done.reasons.join(', ') };
    if (!done.ok) return { outcome: done.kind === 'standard' ? 'standard_failed' : 'output_failed', log, reasons: done.reasons };
    return {
      outcome: 'ok', pdf: done.pdf, pages, totalPages: pages, log, warnings, ...errors,
      ...(done.images.length > 0 ? { pageImages: done.images } : {}),
      ...(done.conformance ? { conformance: done.conformance } : {}),
    };
  }
  if (job.keepPages !== undefined && pages > job.keepPages) {
    const cut = await exec(['qpdf', `${MAIN}.pdf`, '--pages', '.', `1-${job.keepPages}`, '--', 'preview.pdf']);
    // qpdf exits 3 on warnings with a usable output.
    const preview = cut.code === 0 || cut.code === 3 ? await workspace.read('preview.pdf', job.maxFileBytes) : null;
    if (preview && preview !== 'over') {
      return { outcome: 'ok', pdf: preview, pages: job.keepPages, totalPages: pages, log, warnings, ...errors };
    }
  }
  return { outcome: 'ok', pdf, pages, totalPages: pages, log, warnings, ...errors };
}

/** Hashes of the files a pass may read back (aux, toc, bbl, …) before it runs. */
async function snapshot(workspace: Workspace): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const { name, size } of (await workspace.files()).files) {
    if ([`${MAIN}.tex`, `${MAIN}.pdf`, `${MAIN}.log`, `${FORMAT}.fmt`].includes(name) || size > SNAPSHOT_CAP) continue;
    // A file that is not plainly the job's (a link, a hard link) counts as unchanged.
    const data = await workspace.read(name, SNAPSHOT_CAP).catch(() => null);
    if (data && data !== 'over') hashes.set(name, sha(data));
  }
  return hashes;
}

/**
 * Another pass is needed when TeX says so, when a file this pass read was rewritten with
 * new content, or when a file it looked for and missed (a toc, a bbl) now exists. The .aux
 * of a plain document is written on the first pass but never needed: LaTeX itself warns
 * when labels or citations in it changed.
 */
async function needsRerun(workspace: Workspace, log: string, before: Map<string, string>): Promise<boolean> {
  if (MINTED_BATCH.test(log) || RERUN_ASKED.test(await withoutEmptyFirstWrites(workspace, log, before))) return true;
  const fls = (await workspace.readCapped(`${MAIN}.fls`, HELPER_CAP))?.toString('utf8') ?? '';
  const inputs = new Set<string>();
  const outputs = new Set<string>();
  /** Files this pass wrote before it first read them: what it read was its own, not the last pass's. */
  const writtenFirst = new Set<string>();
  for (const line of fls.split('\n')) {
    const match = /^(INPUT|OUTPUT) (.+)$/.exec(line);
    if (!match || match[2]!.startsWith('/')) continue;
    const name = match[2]!.replace(/^\.\//, '');
    if (match[1] === 'OUTPUT' && !inputs.has(name)) writtenFirst.add(name);
    (match[1] === 'INPUT' ? inputs : outputs).add(name);
  }
  for (const name of inputs) {
    // A file new in this pass was read back by LaTeX's own end-of-run check (the .aux).
    // pdfx's pdfa.xmpi differs every pass (a fresh InstanceID) but is written before it is read.
    if (!outputs.has(name) || !before.has(name) || writtenFirst.has(name) || HELPER_CONTROL_FILES.test(name)) continue;
    const data = await workspace.read(name, SNAPSHOT_CAP).catch(() => null);
    if (data && data !== 'over' && before.get(name) !== sha(data)) return true;
  }
  for (const match of log.matchAll(/^No file (\S+)\.$/gm)) {
    const name = match[1]!.replace(/^\.\//, '');
    if (name.endsWith('.aux')) continue;
    if (((await workspace.size(name).catch(() => null)) ?? 0) > 0) return true;
  }
  return false;
}

/**
 * The log without rerunfilecheck's warnings for a file that did not exist before this pass
 * and is empty now (hyperref's .out of a document without sections): a missing file and an
 * empty one read the same, so a rerun would change nothing. latexmk reruns there; we do not.
 */
async function withoutEmptyFirstWrites(workspace: Workspace, log: string, before: Map<string, string>): Promise<string> {
  let kept = log;
  for (const match of log.matchAll(RERUNFILECHECK_WARNING)) {
    const name = match[1]!.replace(/^\.\//, '');
    if (before.has(name) || (await workspace.size(name).catch(() => null)) !== 0) continue;
    kept = kept.replace(match[0], '');
  }
  return kept;
}

/**
 * One command in the job's sandbox, under the job's limits, its deadline and a disk watch.
 * `fileBytes` raises the file size cap for our own outputs (qpdf's JSON).
 */
async function execIn(
  pool: SandboxPool,
  session: Session,
  workspace: Workspace,
  job: TexJob,
  deadline: number,
  argv: string[],
  fileBytes?: number,
  warm = false,
  again = false,
  goline?: string,
): Promise<Exec> {
  const remaining = deadline - performance.now();
  if (remaining <= 0 || job.signal?.aborted) throw new Killed('timeout');
  const limits: ProcessLimits = {
    cpuSeconds: job.cpuSeconds ?? Math.ceil(job.timeoutMs / 1000) + 1,
    fileBytes: fileBytes ?? job.maxFileBytes,
    memoryBytes: MEMORY_BYTES,
    processes: PROCESSES,
  };
  const command = pool.command(session, argv, limits);

  let killed: Killed | null = null;
  const kill = (reason: Killed) => {
    killed ??= reason;
    session.kill();
  };
  const timer = setTimeout(() => kill(new Killed('timeout')), remaining);
  const onAbort = () => kill(new Killed('timeout'));
  job.signal?.addEventListener('abort', onAbort, { once: true });
  // Each file is capped by RLIMIT_FSIZE; the watch caps the workspace as a whole, and the
  // number of entries in it (inodes on the host's disk).
  const budget = 2 * job.maxFileBytes + (fileBytes ?? 0) + 64 * 1024 * 1024;
  let measuring = false;
  const watch = setInterval(() => {
    if (measuring) return;
    measuring = true;
    void measure(workspace)
      .then(({ total, largest, overflow }) => {
        if (overflow) kill(new Killed('refused', undefined, `the document created more than ${WALK_ENTRIES} files`));
        else if (total > budget) kill(new Killed('file_too_large', largest));
      })
      .finally(() => (measuring = false));
  }, WATCH_MS);
  try {
    // A warm engine already spent CPU time loading its format: it gets WARM_CPU_SECONDS more.
    // A paused preamble spent its preamble's CPU time too: it gets PAUSED_CPU_SECONDS more.
    const bonus = goline === undefined ? WARM_CPU_SECONDS : PAUSED_CPU_SECONDS;
    const result = warm ? await session.go({ ...limits, cpuSeconds: limits.cpuSeconds + bonus }, command, again, goline) : await session.run(command);
    // RLIMIT_FSIZE kills with SIGXFSZ, which the shell reports as 128 + 25.
    const after = await measure(workspace);
    if (result.code === 128 + 25) throw new Killed('file_too_large', after.largest);
    // A command quicker than the watch is measured once at its end.
    if (after.overflow) throw new Killed('refused', undefined, `the document created more than ${WALK_ENTRIES} files`);
    if (after.total > budget) throw new Killed('file_too_large', after.largest);
    return result;
  } catch (err) {
    if (killed) throw killed;
    throw err;
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    job.signal?.removeEventListener('abort', onAbort);
  }
}
