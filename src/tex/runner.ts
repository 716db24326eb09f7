// Runs one TeX job in one sandbox (a session, see session.ts): the engine as many passes as
// the document needs (bibtex/biber/makeindex in between), each command under the job's
// limits, deadline and a disk watch; then the PDF's pages and active content (pdfread.ts; one qpdf when it gives up), and
// the workspace is deleted whatever happened. The source is written only into the
// workspace, never logged. Which sandbox a job gets is the pool's (pool.ts); whether it runs
// with a cached preamble format is the preamble cache's (preamble-cache.ts).
import { createHash } from 'node:crypto';
import { lchown, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JobFileNameError } from './errors.js';
import {
  engineArgs,
  FORMAT,
  FORMAT_ENGINE,
  formatEngineArgs,
  MEMORY_BYTES,
  PAUSED_CPU_SECONDS,
  PROCESSES,
  WARM_CPU_SECONDS,
  type JobRunner,
  type TexJob,
  type TexResult,
  type TexStages,
} from './job.js';
import type { Compiler } from './compilers.js';
import { demoteLater } from './demote.js';
import { judgeHelper, planHelpers, type ReadFile } from './passes.js';
import { goLine, PAUSED_DRIVER, PAUSED_ENGINE, PAUSED_PREAMBLE, pausedDriver, pausedEngineArgs } from './paused.js';
import { outputFiles, outputSource } from './output/source.js';
import { runOutputStep } from './output/steps.js';
import type { WarmValidators } from './output/warm-validator.js';
import type { FontMaps } from './font-map.js';
import type { FormatEntry } from './format-cache.js';
import { activeContent, SCAN_PATTERN } from './pdfcheck.js';
import { inspectPdf, type PdfInspection } from './pdfread.js';
import { SandboxPool, type PoolOptions } from './pool.js';
import type { ProcessLimits } from './sandbox.js';
import type { Exec, Session } from './session.js';
import { collectErrors, collectWarnings, type BibliographyProblem } from './warnings.js';
import { isJobOwnPath, pathProblem } from './project/paths.js';
import { LOG_HEAD_BYTES, LOG_TAIL_BYTES, MAIN, WALK_ENTRIES, Workspace, WorkspaceViolation } from './workspace.js';

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
/** qpdf's JSON view of the PDF (objects without stream data), written and scanned in the sandbox. */
const INSPECT_CAP = 64 * 1024 * 1024;
const INSPECT_SCAN = '.quire-pdf-scan';

export type RunnerOptions = PoolOptions;

/** One command in a sandbox of the runner, under the limits it was opened with. */
export type SandboxRun = (argv: string[]) => Promise<Exec>;

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
class WholeMapNeeded extends Error {}

/** A preamble format as a job runs with it: its bytes, and whether its engines may read the core font map. */
export type JobFormat = Pick<FormatEntry, 'fmt' | 'coreMap'>;

class Killed extends Error {
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
async function measure(workspace: Workspace): Promise<{ total: number; largest: string; overflow: boolean }> {
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
function workspaceOf(session: Session): Workspace {
  return new Workspace(session.dir, session.uid ?? process.getuid?.() ?? 0);
}

export class TexRunner implements JobRunner {
  private readonly pool: SandboxPool;

  constructor(
    private readonly options: RunnerOptions,
    /** Warm PDF/A-1b validators for the output step (none: Preflight runs cold). */
    private readonly validators?: WarmValidators,
  ) {
    this.pool = new SandboxPool(options);
  }

  start(): Promise<string[]> {
    return this.pool.start();
  }

  async close(): Promise<void> {
    await this.validators?.close();
    await this.pool.close();
  }

  /**
   * Runs a job as `uid` (an unprivileged id when the service runs as root), in the uid's warm
   * sandbox when it has one. `format`: a preamble format the job's first pass starts from
   * (see preamble-cache.ts). `paused`: a sandbox made for this job by `pause` or `prime`,
   * used once.
   */
  async run(job: TexJob, uid?: number, format?: JobFormat, paused?: Session): Promise<TexResult> {
    const started = performance.now();
    const result = await this.attempt(job, uid, format, paused, false);
    if (result !== 'whole map') return result;
    // Warm pdflatex and a core-map format's engines read the core map: the job runs again without either.
    // The job's timeout covers both attempts: a document cannot double its time by asking for a font.
    const left = Math.max(0, job.timeoutMs - (performance.now() - started));
    const again = await this.attempt({ ...job, timeoutMs: left }, uid, undefined, undefined, true);
    if (again === 'whole map') throw new Error('a pass with the whole font map asked for it again');
    again.stages = { ...again.stages, fontmap: performance.now() - started - again.durationMs };
    again.durationMs = Math.round(performance.now() - started);
    return again;
  }

  /** `run`, once: with `wholeMap`, no pass reads the core font map (its warm pdflatex is not used). */
  private async attempt(job: TexJob, uid: number | undefined, format: JobFormat | undefined, paused: Session | undefined, wholeMap: boolean): Promise<TexResult | 'whole map'> {
    const started = performance.now();
    const session = paused ?? (await this.pool.take(uid, job.compiler));
    const stages: TexStages = {};
    const state = { passes: 0, stages, paused: false, wholeMap };
    let stopped = true;
    // Only jobs of best-effort callers yield: demoting every long job would starve them all under a stream of short ones.
    const undemote = demoteLater(() => session.pid, job.fairness?.yields ? (this.options.demoteAfterMs ?? 0) : 0);
    try {
      // A paused preamble's sandbox: its engine waits for the go-line, written only once every file of the job is in place.
      // A primed sandbox (prime) holds the format and runs its engine already.
      const primed = session.engine === FORMAT_ENGINE;
      await this.prepare(session, job, primed ? undefined : format);
      // The job's first pass starts warm with the format (the slot's warm engine has the base one).
      if (format && !primed) await this.startFormatEngine(session, format);
      stages.sandbox = performance.now() - started;
      const result = await this.compile(session, job, state, format);
      stopped = false;
      const warm = state.paused ? { warm: 'paused' as const } : {};
      return { ...result, ...warm, passes: state.passes, durationMs: Math.round(performance.now() - started), stages };
    } catch (caught) {
      if (caught instanceof WholeMapNeeded) return 'whole map';
      const err = caught instanceof WorkspaceViolation ? new Killed('refused', undefined, caught.message) : caught;
      if (!(err instanceof Killed)) throw err;
      // The log too is read safely: when it is the file that broke the rules, there is none.
      const log = (await workspaceOf(session).readLog(`${MAIN}.log`).catch(() => null)) ?? '';
      return {
        outcome: err.outcome,
        log,
        passes: state.passes,
        durationMs: Math.round(performance.now() - started),
        ...(err.file ? { file: err.file } : {}),
        ...(err.problem ? { problem: err.problem } : {}),
      };
    } finally {
      undemote();
      const releasing = performance.now();
      await (paused ? this.pool.discard(session, stopped) : this.pool.release(session, uid, stopped));
      // The result (already built) holds this same object.
      stages.cleanup = performance.now() - releasing;
    }
  }

  /**
   * A fresh sandbox on `uid` whose `compiler` runs `preamble` (its first `lines` lines of
   * main.tex) and waits for the go-line (see paused.ts); the session to pass to `run`, once.
   * `files` (the output step's .xmpdata) are in the sandbox before the preamble runs.
   */
  async pause(uid: number | undefined, compiler: Compiler, preamble: string, lines: number, files: ReadonlyArray<{ name: string; data: Buffer }> = []): Promise<Session> {
    const session = await this.pool.openFor(uid, compiler);
    try {
      for (const [name, text] of [
        [PAUSED_PREAMBLE, preamble],
        [PAUSED_DRIVER, pausedDriver(preamble, lines, compiler)],
        ...files.map((file) => [file.name, file.data] as const),
      ] as const) {
        await writeFile(join(session.dir, name), text, { flag: 'wx' });
        if (session.uid !== undefined) await lchown(join(session.dir, name), session.uid, session.uid);
      }
      const pdf = this.pool.warmPdf(compiler);
      await session.startEngine(PAUSED_ENGINE, this.pool.command(session, pausedEngineArgs(compiler, this.pool.fmt(session, compiler), pdf !== undefined)), pdf && this.pool.command(session, pdf));
      return session;
    } catch (err) {
      await this.pool.discard(session, true);
      throw err;
    }
  }

  /**
   * A fresh sandbox on `uid` holding the preamble format `format`, its format engine started
   * (loading it and the font map, then waiting for its line; see primed-formats.ts): the
   * session to pass to `run` with the same format, once. `twoPasses`: the engine of a second
   * pass is started beside the first (its last job took two passes or more).
   */
  async prime(uid: number | undefined, format: JobFormat, twoPasses = false): Promise<Session> {
    const session = await this.pool.openFor(uid, 'pdflatex');
    try {
      await writeFile(join(session.dir, `${FORMAT}.fmt`), format.fmt, { flag: 'wx' });
      if (session.uid !== undefined) await lchown(join(session.dir, `${FORMAT}.fmt`), session.uid, session.uid);
      await this.startFormatEngine(session, format);
      if (twoPasses) await session.startNext();
      return session;
    } catch (err) {
      await this.pool.discard(session, true);
      throw err;
    }
  }

  /** The format engine, started ahead on the preamble format in the session's workspace. */
  private startFormatEngine(session: Session, format: JobFormat): Promise<void> {
    return session.startEngine(FORMAT_ENGINE, this.pool.command(session, formatEngineArgs(false, this.formatCoreMap(session, format))));
  }

  /** The core font map a format's engines read (as the session sees it), when the format allows it. */
  private formatCoreMap(session: Session, format: JobFormat): string | undefined {
    return format.coreMap ? this.pool.coreMap(session, 'pdflatex') : undefined;
  }

  /** The font maps of the core map (font-map.ts): a format build checks its preamble's fonts against them. */
  get fontMaps(): FontMaps | undefined {
    return this.pool.fontMaps;
  }

  /** Ends a paused or primed sandbox no job took (evicted, expired, or the service closing). */
  discard(session: Session): Promise<void> {
    return this.pool.discard(session, true);
  }

  /**
   * `work` in a new sandbox on `uid` holding a copy of `job` (no warm engine, no deadline of
   * its own; a format build): each command under `limits`, the workspace as a whole capped at
   * `diskBytes` (past it, the command's promise rejects). `signal` kills the sandbox.
   */
  async isolated<T>(
    job: TexJob,
    uid: number | undefined,
    limits: ProcessLimits,
    diskBytes: number,
    signal: AbortSignal,
    work: (run: SandboxRun, workspace: Workspace) => Promise<T>,
  ): Promise<T> {
    const session = await this.pool.open(uid);
    const kill = () => session.kill();
    signal.addEventListener('abort', kill, { once: true });
    if (signal.aborted) kill();
    try {
      await this.prepare(session, job);
      const workspace = workspaceOf(session);
      return await work(async (argv) => {
        const result = await session.run(this.pool.command(session, argv, limits));
        const { total, overflow } = await measure(workspace);
        if (overflow || total > diskBytes) throw new Error('the build filled its workspace');
        return result;
      }, workspace);
    } finally {
      signal.removeEventListener('abort', kill);
      await session.close();
    }
  }

  private async prepare(session: Session, job: TexJob, format?: JobFormat): Promise<void> {
    const dir = session.dir;
    // The output step's additions (pdfx, embedded files) and its own files (not the job's: no name check).
    const source = (job.output && outputSource(job.source, job.output, job.compiler)) ?? job.source;
    await writeFile(join(dir, `${MAIN}.tex`), source);
    if (format) await writeFile(join(dir, `${FORMAT}.fmt`), format.fmt, { flag: 'wx' });
    for (const file of job.files ?? []) {
      // Inside the project and none of the files the service writes for the job (project/paths.ts);
      // dot names are ours too (the format's .quire-pre.fmt): the compile layer skips them as clutter.
      const own = isJobOwnPath(file.name, { xmpdata: job.output?.pdfStandard !== undefined }) || file.name.split('/').some((part) => part.startsWith('.'));
      if (pathProblem(file.name) || own) throw new JobFileNameError(file.name);
      const slash = file.name.lastIndexOf('/');
      if (slash > 0) await mkdir(join(dir, file.name.slice(0, slash)), { recursive: true, mode: 0o700 });
      // Two job files under one name are a caller's mistake the service did not catch: never a 500.
      await writeFile(join(dir, file.name), file.data, { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? new JobFileNameError(file.name) : err;
      });
    }
    for (const file of job.output ? outputFiles(job.output, MAIN, (job.files ?? []).map((f) => f.name)) : []) {
      const slash = file.name.indexOf('/');
      if (slash > 0) await mkdir(join(dir, file.name.slice(0, slash)), { recursive: true, mode: 0o700 });
      // A paused preamble read its .xmpdata before the job came: the same bytes, or no pass.
      const there = session.engine === PAUSED_ENGINE ? await workspaceOf(session).read(file.name, file.data.length) : null;
      if (there !== null) {
        if (!(there instanceof Buffer) || !there.equals(file.data)) throw new Error(`the paused sandbox's ${file.name} is not the job's`);
        continue;
      }
      await writeFile(join(dir, file.name), file.data, { flag: 'wx' });
    }
    if (session.uid !== undefined) {
      // Written by us just now (nothing of the job has run yet): the folders and their files.
      for (const name of await readdir(dir, { recursive: true })) await lchown(join(dir, name), session.uid, session.uid);
    }
  }

  private async compile(
    session: Session,
    job: TexJob,
    state: { passes: number; stages: TexStages; paused: boolean; wholeMap: boolean },
    format?: JobFormat,
  ): Promise<Omit<TexResult, 'passes' | 'durationMs'>> {
    const compileStart = performance.now();
    const { stages } = state;
    stages.tex = 0;
    const result = await this.passes(session, job, state, format);
    stages.reads = performance.now() - compileStart - stages.tex - (stages.inspect ?? 0);
    return result;
  }

  private async passes(
    session: Session,
    job: TexJob,
    state: { passes: number; stages: TexStages; paused: boolean; wholeMap: boolean },
    format: JobFormat | undefined,
  ): Promise<Omit<TexResult, 'passes' | 'durationMs'>> {
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
    const exec = (argv: string[], fileBytes?: number) => this.exec(session, workspace, job, deadline, argv, fileBytes);
    // Every read of a file the job wrote goes through the workspace reader.
    const read: ReadFile = (name) => workspace.readCapped(name, HELPER_CAP);
    const sources = [job.source, ...(job.files ?? []).filter((f) => /\.(tex|sty|cls)$/.test(f.name)).map((f) => f.data.toString('utf8'))];
    const done = new Map<string, string>();
    const problems = new Map<string, BibliographyProblem[]>();
    let log = '';

    while (state.passes < Math.min(MAX_PASSES, job.maxPasses ?? MAX_PASSES)) {
      const before = await this.snapshot(workspace);
      state.passes++;
      // The pass is a warm engine's when the sandbox started the job's engine; on the first
      // pass of a document that will likely need a second, that one starts meanwhile.
      // A paused preamble serves the first pass only; its sandbox starts no engine for a second.
      const paused = session.engine === PAUSED_ENGINE;
      // Which font map a warm engine read: the core map for warm pdflatex and for a format that allows it.
      const coreMap = !paused && (format ? this.formatCoreMap(session, format) : this.pool.coreMap(session, job.compiler)) !== undefined;
      // Engines started ahead of time halt on errors: a job that goes on past them starts its own.
      const warm = paused || (!job.continueOnError && session.engine === (format ? FORMAT_ENGINE : job.compiler) && !(job.compiler !== 'xelatex' && setsFontMap(sources)) && !(coreMap && state.wholeMap));
      // A second engine already waiting (a primed format's) is used whatever the guess.
      const again = warm && !paused && state.passes === 1 && (rerunLikely(sources) || session.next);
      const argv = format ? formatEngineArgs(true) : engineArgs(job.compiler, this.options.hardenLua !== false, this.pool.fmt(session, job.compiler), !job.continueOnError);
      const pass = await timed(this.exec(session, workspace, job, deadline, argv, undefined, warm, again, paused ? goLine(new Date()) : undefined));
      const fls = (await read(`${MAIN}.fls`))?.toString('utf8') ?? '';
      // A warm engine read the core font map: a pass that opened a font only the whole map has runs again with it.
      if (warm && coreMap && this.pool.fontMaps?.needsWholeMap(fls)) throw new WholeMapNeeded();
      const transcript = await workspace.readLog(`${MAIN}.log`);
      if (transcript === null) {
        // No transcript and no banner means TeX never started: our fault, not the document's.
        // A format TeX cannot load (a broken inflated copy) is ours too.
        const output = warm ? await session.passOutput() : pass.output;
        if (!/^This is /m.test(output) || /Fatal format file error|I can't find the format file/.test(output)) {
          throw new Error(`TeX did not start: ${output.slice(0, 2000)}`);
        }
        return { outcome: 'refused', log: '', problem: `${MAIN}.log is missing: the document removed its own transcript` };
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
      if (!changed && (empty || !(await this.needsRerun(workspace, log, before)))) break;
    }
    const pdf = await workspace.read(`${MAIN}.pdf`, job.maxFileBytes);
    if (pdf === 'over') return { outcome: 'file_too_large', log, file: `${MAIN}.pdf` };
    if (!pdf) return { outcome: 'failed', log };
    const inspectStart = performance.now();
    // TeX's own PDF is read in-process; what that reader cannot vouch for goes to qpdf.
    const inspected: PdfInspection | { unmeasurable: string } = inspectPdf(pdf, { pdfa: job.output?.pdfStandard !== undefined }) ?? (await this.inspect(exec, workspace));
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
        exec, workspace, dir: session.dir, maxFileBytes: job.maxFileBytes, pages, facts: inspected.pdfa, validators: this.validators, deadline, signal: job.signal,
        scope: job.preamble?.scope ?? job.fairness?.caller, inspect: (file: string) => this.inspect(exec, workspace, file),
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

  /**
   * A PDF's page count (main.pdf, or `file`), then its active content (see pdfcheck.ts), in one command: qpdf's
   * JSON and the grep over it stay in the sandbox, under its limits; the host reads back the
   * count and the matches. A PDF whose JSON passes INSPECT_CAP, or that qpdf cannot turn into
   * JSON, is not delivered either.
   */
  private async inspect(
    exec: (argv: string[], fileBytes?: number) => Promise<Exec>,
    workspace: Workspace,
    file = `${MAIN}.pdf`,
  ): Promise<{ pages: number; active: string[] } | { unmeasurable: string }> {
    // One qpdf (each start costs about 9 ms in the sandbox): its JSON holds the page list, one
    // `"pageposfrom1": N` line per page (keys qpdf writes; a PDF's own keys keep their "/"), and
    // the objects the scan greps. qpdf exits 3 when it read the PDF with warnings: the count is
    // good. Exit 6: no count; 4: the JSON passed the file size cap; 5: the scan itself failed
    // (fail closed).
    const script =
      'rm -rf "$0" "$0.json" || exit 5; qpdf --json=2 --json-key=qpdf --json-key=pages "$1" >"$0.json" 2>"$0.err"; rc=$?; ' +
      'cat "$0.err"; rm -f "$0.err"; [ "$rc" -eq 153 ] && { rm -f "$0.json"; exit 4; }; ' +
      '[ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && { rm -f "$0.json"; exit 6; }; ' +
      'grep -c -E \'^ *"pageposfrom1": [0-9]+,?$\' "$0.json"; ' +
      'grep -E -i -o "$2" "$0.json" >"$0"; [ "$?" -gt 1 ] && rc=5; rm -f "$0.json"; exit "$rc"';
    const scanned = await exec(['sh', '-c', script, INSPECT_SCAN, file, SCAN_PATTERN], INSPECT_CAP);
    // qpdf's warnings come first in the output: the count is the last line that is only a number.
    const pages = Number(scanned.output.split('\n').filter((line) => /^\d+$/.test(line.trim())).pop());
    if (scanned.code === 6 || !Number.isInteger(pages) || pages < 1) return { unmeasurable: scanned.output.slice(0, 500) };
    if (scanned.code !== 0 && scanned.code !== 3) {
      throw new WorkspaceViolation(
        scanned.code === 4 ? 'the PDF has too many objects to be inspected for active content' : 'the PDF could not be inspected for active content',
      );
    }
    const scan = await workspace.read(INSPECT_SCAN, INSPECT_CAP);
    if (scan === 'over') throw new WorkspaceViolation('the PDF has too many links and actions to be inspected for active content');
    if (scan === null) throw new WorkspaceViolation('the PDF could not be inspected for active content');
    return { pages, active: activeContent(scan?.toString('utf8') ?? '') };
  }

  /** Hashes of the files a pass may read back (aux, toc, bbl, …) before it runs. */
  private async snapshot(workspace: Workspace): Promise<Map<string, string>> {
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
  private async needsRerun(workspace: Workspace, log: string, before: Map<string, string>): Promise<boolean> {
    if (MINTED_BATCH.test(log) || RERUN_ASKED.test(await this.withoutEmptyFirstWrites(workspace, log, before))) return true;
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
  private async withoutEmptyFirstWrites(workspace: Workspace, log: string, before: Map<string, string>): Promise<string> {
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
  private async exec(
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
    const command = this.pool.command(session, argv, limits);

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
}
