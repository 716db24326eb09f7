// Runs one TeX job in a sandboxed workspace: the engine as many passes as the document needs
// (bibtex/biber/makeindex in between), the page count from the PDF, then the workspace is
// deleted whatever happened. The source is written only into the workspace, never logged.
import { createHash } from 'node:crypto';
import { chmod, lchown, mkdir, readdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { JobFileNameError } from './errors.js';
import type { Compiler } from './compilers.js';
import { buildFormat, FORMAT_CAP, FORMAT_FIRST_LINE } from './format-build.js';
import type { FormatCache, FormatEntry } from './format-cache.js';
import type { Formats } from './formats.js';
import { LUA_INIT } from './luainit.js';
import { judgeHelper, planHelpers, type ReadFile } from './passes.js';
import { activeContent, SCAN_PATTERN } from './pdfcheck.js';
import { preambleKey, refusal, splitPreamble, texliveIdentity, type PreambleScope } from './preamble.js';
import { prlimit, SANDBOX_FORMATS, type ProcessLimits } from './sandbox.js';
import { Session, type Exec } from './session.js';
import { ownerFolder, sweepWorkRoot } from './sweep.js';
import { collectWarnings, type TexWarning } from './warnings.js';
import { LOG_HEAD_BYTES, LOG_TAIL_BYTES, WALK_ENTRIES, Workspace, WorkspaceViolation } from './workspace.js';

export const MAIN = 'main';
const MAX_PASSES = 5;
/** Files biblatex writes for biber (and reads back only to compare): biber's own key decides. */
const HELPER_CONTROL_FILES = /\.(bcf|run\.xml)$/;
/** Address space per process: enough for lualatex with large OpenType fonts. */
const MEMORY_BYTES = 4 * 1024 ** 3;
/** Processes per job (xelatex spawns xdvipdfmx; the rest spawn nothing). */
const PROCESSES = 32;
const WATCH_MS = 250;
/** CPU seconds a warm engine gets on top of the job's, for loading its format ahead of time. */
const WARM_CPU_SECONDS = 2;
/** Helper files (aux, bcf, idx, fls, blg) read back for the rerun logic. */
const HELPER_CAP = 64 * 1024 * 1024;
/** Files hashed between passes; larger ones count as unchanged. */
const SNAPSHOT_CAP = 16 * 1024 * 1024;
/** qpdf's JSON view of the PDF (objects without stream data), written and scanned in the sandbox. */
const INSPECT_CAP = 64 * 1024 * 1024;
const INSPECT_SCAN = '.quire-pdf-scan';
/**
 * A cached preamble format in a job's workspace: a dot name no job file can have and TeX
 * (openout_any=p) cannot write. The warm engine that loads it is named FORMAT_ENGINE.
 */
const FORMAT = '.quire-pre';
const FORMAT_ENGINE = 'pdflatex+preamble';
/** A format build's wall clock, CPU per command, and the workspace it may fill. */
const BUILD_MS = 60_000;
const BUILD_CPU_SECONDS = 30;
const BUILD_DISK = 512 * 1024 * 1024;
/** How long the TeX Live identity in the preamble keys is trusted before it is read again. */
const TEXLIVE_REFRESH_MS = 10 * 60 * 1000;

export interface TexJob {
  source: string;
  compiler: Compiler;
  /** `blob`: where these exact bytes already are in the shared blob store (a stored asset), so a remote worker can fetch them instead of receiving a copy. */
  files?: ReadonlyArray<{ name: string; data: Buffer; blob?: string }>;
  timeoutMs: number;
  /** Largest file (the PDF included) the job may write. */
  maxFileBytes: number;
  /** When the PDF has more pages, deliver only the first `keepPages` (a preview). */
  keepPages?: number;
  signal?: AbortSignal;
  /** Where the preamble cache may look (pdflatex only); without it the job never uses or builds a format. */
  preamble?: PreambleScope;
  /** The TeX Live year whose image runs the job (the queue's default when absent). */
  texlive?: string;
}

/**
 * `unmeasurable`: TeX wrote a PDF but its pages and size could not be read back.
 * `refused`: the job left something other than the plain files a TeX run writes (a link, a
 * FIFO, a directory, a hard link, thousands of files) where the service reads; see `problem`.
 * `active_content`: the PDF carries JavaScript, a Launch action or a script URI; see `problem`.
 */
export type TexOutcome = 'ok' | 'failed' | 'timeout' | 'file_too_large' | 'unmeasurable' | 'refused' | 'active_content';

export interface TexResult {
  outcome: TexOutcome;
  /** The PDF when outcome is ok: the whole document, or its first `keepPages` pages. */
  pdf?: Buffer;
  /** Pages in `pdf`. */
  pages?: number;
  /** Pages of the whole document. */
  totalPages?: number;
  /** TeX's transcript (main.log), plus the output of a failing helper. */
  log: string;
  passes: number;
  durationMs: number;
  /** With file_too_large: the file that hit the cap. */
  file?: string;
  /** With refused and active_content: what was wrong, in words for the caller. */
  problem?: string;
  /** With ok: problems that did not stop delivery (undefined references, bibliography errors, …). */
  warnings?: TexWarning[];
}

export interface RunnerOptions {
  /** Parent of the per-job workspaces; job uids must be able to traverse it. */
  workRoot: string;
  isolate: boolean;
  /** The TeX image this runner's sandboxes get as their root (default: the default year's). */
  root?: string;
  /** Inflates (once, when the runner starts) the engines' formats; see formats.ts. */
  formats?: () => Promise<Formats>;
  /** Builds (once, on the first lualatex job) the luaotfload cache; see luacache.ts. */
  luaCache?: () => Promise<string>;
  /** Keep a started sandbox ready for the next job (default true). */
  warm?: boolean;
  /**
   * Run lualatex with LUA_INIT (default true). Only tests turn it off, to attack the
   * host-side reads with the links and renames a document could make without it.
   */
  hardenLua?: boolean;
  /** Start each warm sandbox's likely engine ahead of time (default true; needs `warm`). */
  warmEngines?: boolean;
  /** The preamble cache (see preamble.ts, format-cache.ts, format-build.ts); none: off. */
  preambles?: FormatCache;
  /** Told how each format build ended (tests, logs). */
  onFormatBuild?: (outcome: { admitted: boolean; reason?: string }) => void;
}

/**
 * Engine flags: no shell escape, no interaction, stop at the first error, record files.
 * `fmt`: the engine's flag for an inflated copy of its format (formats.ts), when there is one.
 */
export function engineArgs(compiler: Compiler, hardenLua = true, fmt: string[] = []): string[] {
  const common = [...fmt, '-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder'];
  if (compiler !== 'lualatex') return [compiler, ...common, `${MAIN}.tex`];
  // lualatex first runs LUA_INIT (no link creation, no rename), then reads the document.
  if (hardenLua) return ['lualatex', '--nosocket', ...common, `-jobname=${MAIN}`, `\\directlua{${LUA_INIT}}\\input{${MAIN}.tex}`];
  return ['lualatex', '--nosocket', ...common, `${MAIN}.tex`];
}

/**
 * The same engine, flags and first action as engineArgs, started ahead of time (see session.ts):
 * in errorstop mode it loads its format, then waits on the terminal for one line, after which
 * it switches to nonstopmode and reads main.tex exactly as a cold run does. The line is read
 * into a macro that is then undefined again, so the document sees no trace of it.
 */
export function warmEngineArgs(compiler: Compiler, fmt: string[] = []): string[] {
  const wait = String.raw`\read16 to\x \let\x\undefined\nonstopmode`;
  const common = [...fmt, '-no-shell-escape', '-halt-on-error', '-file-line-error', '-recorder', `-jobname=${MAIN}`];
  if (compiler !== 'lualatex') return [compiler, ...common, `${wait}\\csname @@input\\endcsname ${MAIN}.tex `];
  return ['lualatex', '--nosocket', ...common, `\\directlua{${LUA_INIT}}${wait}\\input{${MAIN}.tex}`];
}

/**
 * pdflatex with a cached preamble format (see format-build.ts), started like a warm engine:
 * in errorstop mode it loads the format and waits for one terminal line, opening no file of
 * the job meanwhile; then it switches to nonstopmode, opens main.tex and skips its preamble.
 * Started ahead of time the driver gives the line; `fed` is the same pass started the
 * ordinary way, its line given at once.
 */
export function formatEngineArgs(fed: boolean): string[] {
  const argv = ['pdflatex', `-fmt=${FORMAT}`, '-progname=pdflatex', '-no-shell-escape', '-halt-on-error', '-file-line-error', '-recorder', `-jobname=${MAIN}`, FORMAT_FIRST_LINE];
  return fed ? ['sh', '-c', 'echo | exec "$@"', 'sh', ...argv] : argv;
}

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

/** Inside the sandbox /tmp is private to the job; TeX's variable trees live there. */
const TEX_ENV: Record<string, string> = {
  openin_any: 'p',
  openout_any: 'p',
  shell_escape: 'f',
  max_print_line: '10000',
  error_line: '254',
  half_error_line: '238',
  LC_ALL: 'C.UTF-8',
  TEXMFVAR: '/tmp/texmf-var',
  TEXMFCACHE: '/tmp/texmf-var',
  TEXMFHOME: '/tmp/texmf',
};

/** Without the sandbox there is no private /tmp: TeX's variable tree goes into the workspace. */
const HOST_TEXMFVAR = '.texmf-var';

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

export class TexRunner {
  private luaCache: Promise<string | undefined> | null = null;
  private luaCacheDir: string | undefined;
  /** The inflated formats, once prepared (none: the engines load TeX Live's own). */
  private formats: Formats | undefined;
  private rootReady: Promise<string[]> | null = null;
  /** This process's folder under the work root, holding its workspaces. */
  private folder: string | undefined;
  /** A warm sandbox per uid, started when the previous job on that uid ended. */
  private readonly spare = new Map<string, Promise<Session>>();
  /** The engine of each uid's last job: its next sandbox starts that engine ahead of time. */
  private readonly likely = new Map<string, Compiler>();
  private closed = false;
  private readonly closing = new Set<Promise<void>>();
  /** Jobs running now: a format build waits for a quieter moment. */
  private active = 0;
  /** The format build under way (at most one), and its sandbox. */
  private building: Promise<void> | null = null;
  private buildSession: Session | null = null;
  private texliveId: { at: number; id: Promise<{ id: string; baseBytes: number } | null> } | null = null;

  constructor(private readonly options: RunnerOptions) {}

  /**
   * Runs a job as `uid` (an unprivileged id when the service runs as root). A pdflatex job
   * whose preamble has a verified format in its scope runs with it; a failure that might be
   * the format's runs again cold. A delivered job whose preamble had none may have one built.
   */
  async run(job: TexJob, uid?: number): Promise<TexResult> {
    const cached = await this.preambleLookup(job);
    this.active++;
    let result: TexResult;
    try {
      if (cached?.entry) {
        const started = performance.now();
        const withFormat = await this.runOnce(job, uid, cached.entry).catch(() => null);
        if (withFormat && !this.doubtful(withFormat, cached.lines)) return withFormat;
        // The cold run gets what is left of the job's time (at least a second).
        const spent = performance.now() - started;
        const cold = await this.runOnce({ ...job, timeoutMs: Math.max(1000, job.timeoutMs - spent) }, uid);
        if (cold.outcome === 'ok' || !withFormat) {
          // The format did what a cold run would not: it goes, and is not built again.
          this.options.preambles!.refuse(cached.key);
          this.options.preambles!.stats.rejections++;
        }
        return { ...cold, durationMs: Math.round(performance.now() - started) };
      }
      result = await this.runOnce(job, uid);
    } finally {
      this.active--;
    }
    if (cached && result.outcome === 'ok') this.scheduleBuild(job, cached.key, uid);
    return result;
  }

  /** Resolves when no format build is under way (tests). */
  async formatsIdle(): Promise<void> {
    while (this.building) await this.building;
  }

  private async runOnce(job: TexJob, uid: number | undefined, format?: FormatEntry): Promise<TexResult> {
    const started = performance.now();
    this.likely.set(String(uid), job.compiler);
    const session = await this.session(uid, job.compiler === 'lualatex');
    const state = { passes: 0 };
    let stopped = true;
    try {
      await this.prepare(session, job, format);
      // The job's first pass starts warm with the format (the slot's warm engine has the base one).
      if (format) await session.startEngine(FORMAT_ENGINE, this.command(session, formatEngineArgs(false)));
      const result = await this.compile(session, job, state, format !== undefined);
      stopped = false;
      return { ...result, passes: state.passes, durationMs: Math.round(performance.now() - started) };
    } catch (caught) {
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
      // A finished job's sandbox is torn down off the caller's path (the uid's next sandbox
      // waits for it); a stopped job's is gone, every process of it, before we answer.
      const closing = session.close(stopped).catch(() => {});
      this.closing.add(closing);
      void closing.then(() => this.closing.delete(closing));
      this.warm(uid, closing);
      if (stopped) await closing;
    }
  }

  /**
   * Prepares the work root and sweeps the workspaces of services that died (customer source)
   * before any job runs; resolves to the swept folders. The server calls it when it starts
   * serving; the first job calls it otherwise. Runs once.
   */
  start(): Promise<string[]> {
    this.rootReady ??= (async () => {
      // Job uids must traverse the root (0711) but not list it; each workspace is 0700 and theirs.
      await mkdir(this.options.workRoot, { recursive: true });
      await chmod(this.options.workRoot, 0o711);
      const swept = await sweepWorkRoot(this.options.workRoot);
      this.folder = await ownerFolder(this.options.workRoot);
      this.formats = await this.options.formats?.().catch(() => undefined);
      return swept;
    })();
    return this.rootReady;
  }

  /** Ends the warm sandboxes and any format build (service shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    this.buildSession?.kill();
    const spares = [...this.spare.values()];
    this.spare.clear();
    await Promise.all([...spares.map((s) => s.then((session) => session.close()).catch(() => {})), ...this.closing, this.formatsIdle()]);
  }

  /**
   * The job's preamble key and, on a hit, its format. Null when the job cannot use the
   * cache: not pdflatex, no scope, no \begin{document} line, a refused preamble, or an
   * unknown TeX Live.
   */
  private async preambleLookup(job: TexJob): Promise<{ key: string; lines: number; entry?: FormatEntry } | null> {
    const formats = this.options.preambles;
    if (!formats?.enabled || job.compiler !== 'pdflatex' || !job.preamble) return null;
    const split = splitPreamble(job.source);
    if (!split || refusal(split.preamble) !== null) return null;
    const texlive = await this.texlive();
    if (texlive === null) return null;
    const key = preambleKey({ ...job.preamble, engine: 'pdflatex', preamble: split.preamble, texlive: texlive.id });
    const entry = formats.lookup(key, job.files ?? []);
    return { key, lines: split.lines, ...(entry ? { entry } : {}) };
  }

  /** The TeX Live identity in every key, read again every TEXLIVE_REFRESH_MS. */
  private texlive(): Promise<{ id: string; baseBytes: number } | null> {
    if (!this.texliveId || performance.now() - this.texliveId.at > TEXLIVE_REFRESH_MS) {
      this.texliveId = { at: performance.now(), id: texliveIdentity(this.options.root).catch(() => null) };
    }
    return this.texliveId.id;
  }

  /**
   * A run with a format is trusted when it delivered, or when it stopped on an error TeX
   * placed on a body line of main.tex (past the preamble the format replaced). Anything else
   * (no transcript, an error elsewhere, a refused or unmeasurable output) runs again cold.
   */
  private doubtful(result: TexResult, preambleLines: number): boolean {
    if (result.outcome === 'ok' || result.outcome === 'timeout') return false;
    if (result.outcome !== 'failed') return true;
    const at = /^\.\/main\.tex:(\d+): /m.exec(result.log);
    return !at || Number(at[1]) <= preambleLines;
  }

  /**
   * Builds the job's preamble format off the request path: one build at a time, none while
   * the machine is busy with jobs or the runner closes, in a fresh sandbox as the same uid
   * holding a copy of the job (see format-build.ts). Only a verified format is kept.
   */
  private scheduleBuild(job: TexJob, key: string, uid: number | undefined): void {
    const formats = this.options.preambles!;
    if (this.closed || this.building || this.active >= availableParallelism() || formats.has(key) || formats.isRefused(key)) return;
    const report = (admitted: boolean, reason?: string) => {
      if (!admitted) {
        formats.stats.rejections++;
        // A rejected preamble is not built again (a shutdown's kill is no verdict).
        if (!this.closed) formats.refuse(key);
      }
      this.options.onFormatBuild?.({ admitted, ...(reason ? { reason } : {}) });
    };
    formats.stats.builds++;
    this.building = this.build(job, uid)
      .then((outcome) => ('entry' in outcome && !this.closed && formats.admit(key, outcome.entry) ? report(true) : report(false, 'rejected' in outcome ? outcome.rejected : 'not kept')))
      .catch((err: Error) => report(false, err.message))
      .finally(() => (this.building = null));
  }

  private async build(job: TexJob, uid: number | undefined): Promise<Awaited<ReturnType<typeof buildFormat>>> {
    const session = await this.open(uid);
    this.buildSession = session;
    const timer = setTimeout(() => session.kill(), BUILD_MS);
    try {
      await this.prepare(session, job);
      const workspace = workspaceOf(session);
      const limits: ProcessLimits = { cpuSeconds: BUILD_CPU_SECONDS, fileBytes: FORMAT_CAP, memoryBytes: MEMORY_BYTES, processes: PROCESSES };
      const run = async (argv: string[]) => {
        const result = await session.run(this.command(session, argv, limits));
        const { total, overflow } = await measure(workspace);
        if (overflow || total > BUILD_DISK) throw new Error('the build filled its workspace');
        return result;
      };
      const texlive = await this.texlive();
      if (!texlive) return { rejected: 'TeX Live unknown' };
      return await buildFormat(run, workspace, { source: job.source, files: job.files ?? [], day: job.preamble!.day, baseBytes: texlive.baseBytes });
    } finally {
      clearTimeout(timer);
      this.buildSession = null;
      await session.close();
    }
  }

  /** The prepared font cache, or undefined when it cannot be built (lualatex then builds its own). */
  private preparedLuaCache(): Promise<string | undefined> {
    this.luaCache ??= (this.options.luaCache ? this.options.luaCache().catch(() => undefined) : Promise.resolve(undefined)).then(
      (dir) => (this.luaCacheDir = dir),
    );
    return this.luaCache;
  }

  private open(uid: number | undefined, after?: Promise<void>, engine?: Compiler): Promise<Session> {
    return Promise.all([this.start(), after]).then(async () => {
      const session = await Session.open(this.folder!, uid, {
        isolate: this.options.isolate,
        ...(this.options.root !== undefined ? { root: this.options.root } : {}),
        env: this.options.isolate
          ? TEX_ENV
          : { ...TEX_ENV, TEXMFVAR: HOST_TEXMFVAR, TEXMFCACHE: HOST_TEXMFVAR, TEXMFHOME: '.texmf' },
        ...(this.luaCacheDir ? { luaCache: this.luaCacheDir } : {}),
        ...(this.formats ? { formats: this.formats.dir } : {}),
      });
      if (engine) await session.startEngine(engine, this.command(session, warmEngineArgs(engine, this.fmt(session, engine))));
      return session;
    });
  }

  /**
   * The engine a uid's next sandbox starts ahead of time: its last job's (pdflatex first).
   * lualatex only when its hardening runs and its font cache is ready: a warm engine must
   * start exactly as the cold one would.
   */
  private warmEngine(uid: number | undefined): Compiler | undefined {
    if (this.options.warmEngines === false) return undefined;
    const engine = this.likely.get(String(uid)) ?? 'pdflatex';
    if (engine === 'lualatex' && (this.options.hardenLua === false || this.luaCache === null)) return 'pdflatex';
    return engine;
  }

  private warm(uid: number | undefined, after: Promise<void>): void {
    if (this.closed || this.options.warm === false) return;
    const spare = this.open(uid, after, this.warmEngine(uid));
    spare.catch(() => {});
    this.spare.set(String(uid), spare);
  }

  private async session(uid: number | undefined, lua: boolean): Promise<Session> {
    if (lua) await this.preparedLuaCache();
    const spare = this.spare.get(String(uid));
    this.spare.delete(String(uid));
    const session = await spare?.catch(() => undefined);
    const usable = session?.alive && (!lua || session.luaCache !== undefined || !this.luaCacheDir);
    if (session && usable) return session;
    if (session) await session.close();
    return this.open(uid);
  }

  private async prepare(session: Session, job: TexJob, format?: FormatEntry): Promise<void> {
    const dir = session.dir;
    await writeFile(join(dir, `${MAIN}.tex`), job.source);
    if (format) await writeFile(join(dir, `${FORMAT}.fmt`), format.fmt, { flag: 'wx' });
    for (const file of job.files ?? []) {
      // Plain names with at most one folder (chapters/intro.tex), none of the job's own files (main.*, preview.pdf).
      if (!/^(?:[A-Za-z0-9_-]+\/)?[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(file.name) || file.name.startsWith(`${MAIN}.`) || file.name === 'preview.pdf') {
        throw new JobFileNameError(file.name);
      }
      const slash = file.name.indexOf('/');
      if (slash > 0) await mkdir(join(dir, file.name.slice(0, slash)), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, file.name), file.data, { flag: 'wx' });
    }
    if (session.uid !== undefined) {
      // Written by us just now (nothing of the job has run yet): the folders and their files.
      for (const name of await readdir(dir, { recursive: true })) await lchown(join(dir, name), session.uid, session.uid);
    }
  }

  private async compile(session: Session, job: TexJob, state: { passes: number }, format = false): Promise<Omit<TexResult, 'passes' | 'durationMs'>> {
    const workspace = workspaceOf(session);
    const deadline = performance.now() + job.timeoutMs;
    const exec = (argv: string[], fileBytes?: number) => this.exec(session, workspace, job, deadline, argv, fileBytes);
    // Every read of a file the job wrote goes through the workspace reader.
    const read: ReadFile = (name) => workspace.readCapped(name, HELPER_CAP);
    const sources = [job.source, ...(job.files ?? []).filter((f) => /\.(tex|sty|cls)$/.test(f.name)).map((f) => f.data.toString('utf8'))];
    const done = new Map<string, string>();
    const problems = new Map<string, Array<{ tool: string; message: string }>>();
    let log = '';

    while (state.passes < MAX_PASSES) {
      const before = await this.snapshot(workspace);
      state.passes++;
      // The pass is a warm engine's when the sandbox started the job's engine; on the first
      // pass of a document that will likely need a second, that one starts meanwhile.
      const warm = session.engine === (format ? FORMAT_ENGINE : job.compiler);
      const again = warm && state.passes === 1 && rerunLikely(sources);
      const argv = format ? formatEngineArgs(true) : engineArgs(job.compiler, this.options.hardenLua !== false, this.fmt(session, job.compiler));
      const pass = await this.exec(session, workspace, job, deadline, argv, undefined, warm, again);
      const transcript = await workspace.readLog(`${MAIN}.log`);
      if (transcript === null) {
        // No transcript and no banner means TeX never started: our fault, not the document's.
        // A format TeX cannot load (a broken inflated copy) is ours too.
        if (!/^This is /m.test(pass.output) || /Fatal format file error|I can't find the format file/.test(pass.output)) {
          throw new Error(`TeX did not start: ${pass.output.slice(0, 2000)}`);
        }
        return { outcome: 'refused', log: '', problem: `${MAIN}.log is missing: the document removed its own transcript` };
      }
      log = transcript;
      // A pass may end without pages (a document that only prints a biblatex list before biber ran).
      const empty = pass.code === 0 && /^No pages of output\.$/m.test(log);
      if (pass.code !== 0 || (!empty && (await workspace.size(`${MAIN}.pdf`)) === null)) return { outcome: 'failed', log };

      // Helpers run when their input changed since they last ran; a changed output forces a pass.
      let changed = false;
      const fls = (await read(`${MAIN}.fls`))?.toString('utf8') ?? '';
      for (const helper of await planHelpers(MAIN, { read, log, fls, sources, done })) {
        const outputs = await Promise.all(helper.outputs.map(async (name) => (await read(name)) ?? Buffer.alloc(0)));
        const result = await exec(helper.argv);
        const verdict = await judgeHelper(helper, result, read);
        if (verdict.fatal) return { outcome: 'failed', log: `${log}\n${verdict.fatal}` };
        problems.set(helper.id, verdict.problems.map((message) => ({ tool: helper.tool, message })));
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
    const inspected = await this.inspect(exec, workspace);
    if ('unmeasurable' in inspected) return { outcome: 'unmeasurable', log: `${log}\nThe PDF could not be measured: ${inspected.unmeasurable}` };
    const { pages, active } = inspected;
    if (active.length > 0) return { outcome: 'active_content', log, problem: active.join(', ') };
    // pdflatex prints an empty font slot as the raw byte: the glyph check reads the log's bytes.
    const raw = job.compiler === 'pdflatex' && /^Missing character: /m.test(log) ? await workspace.read(`${MAIN}.log`, LOG_HEAD_BYTES + LOG_TAIL_BYTES) : null;
    const warnings = collectWarnings(log, raw instanceof Buffer ? raw : null, job.compiler, [...problems.values()].flat());
    if (job.keepPages !== undefined && pages > job.keepPages) {
      const cut = await exec(['qpdf', `${MAIN}.pdf`, '--pages', '.', `1-${job.keepPages}`, '--', 'preview.pdf']);
      // qpdf exits 3 on warnings with a usable output.
      const preview = cut.code === 0 || cut.code === 3 ? await workspace.read('preview.pdf', job.maxFileBytes) : null;
      if (preview && preview !== 'over') {
        return { outcome: 'ok', pdf: preview, pages: job.keepPages, totalPages: pages, log, warnings };
      }
    }
    return { outcome: 'ok', pdf, pages, totalPages: pages, log, warnings };
  }

  /**
   * main.pdf's page count, then its active content (see pdfcheck.ts), in one command: qpdf's
   * JSON and the grep over it stay in the sandbox, under its limits; the host reads back the
   * count and the matches. A PDF whose JSON passes INSPECT_CAP, or that qpdf cannot turn into
   * JSON, is not delivered either.
   */
  private async inspect(
    exec: (argv: string[], fileBytes?: number) => Promise<Exec>,
    workspace: Workspace,
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
    const scanned = await exec(['sh', '-c', script, INSPECT_SCAN, `${MAIN}.pdf`, SCAN_PATTERN], INSPECT_CAP);
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
    if (/Rerun to get|Please rerun|Please \(re\)run|may have changed\. Rerun|Rerun LaTeX|rerun LaTeX/i.test(log)) {
      return true;
    }
    const fls = (await workspace.readCapped(`${MAIN}.fls`, HELPER_CAP))?.toString('utf8') ?? '';
    const inputs = new Set<string>();
    const outputs = new Set<string>();
    for (const line of fls.split('\n')) {
      const match = /^(INPUT|OUTPUT) (.+)$/.exec(line);
      if (!match || match[2]!.startsWith('/')) continue;
      const name = match[2]!.replace(/^\.\//, '');
      (match[1] === 'INPUT' ? inputs : outputs).add(name);
    }
    for (const name of inputs) {
      // A file new in this pass was read back by LaTeX's own end-of-run check (the .aux).
      if (!outputs.has(name) || !before.has(name) || HELPER_CONTROL_FILES.test(name)) continue;
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

  /** `-fmt` for the inflated format of `compiler`, as the session sees it (none when not prepared). */
  private fmt(session: Session, compiler: Compiler): string[] {
    if (!session.formats || !this.formats?.compilers.has(compiler)) return [];
    // -progname keeps kpathsea's search paths (and the recorder's file) those of the usual command.
    return [`-fmt=${this.options.isolate ? SANDBOX_FORMATS : session.formats}/${compiler}`, `-progname=${compiler}`];
  }

  /**
   * `argv` under `limits`. Without them (a warm engine), CPU time and file size stay as the
   * sandbox's (unlimited) until the job's first pass lowers them: raising a limit needs a
   * privilege the sandbox does not have, and lowering it twice would race with this prlimit.
   */
  private command(session: Session, argv: string[], limits?: ProcessLimits): string[] {
    const limited = limits
      ? [...prlimit(limits), ...argv]
      : ['prlimit', `--as=${MEMORY_BYTES}`, `--nproc=${PROCESSES}`, '--core=0', '--', ...argv];
    if (argv[0] !== 'lualatex' || session.luaCache === undefined) return limited;
    // luaotfload needs a writable cache: the job starts from a copy of the prepared one.
    const target = this.options.isolate ? TEX_ENV.TEXMFVAR! : HOST_TEXMFVAR;
    return ['sh', '-c', 'test -d "$1" || cp -r "$0" "$1"; shift; exec "$@"', session.luaCache, target, ...limited];
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
  ): Promise<Exec> {
    const remaining = deadline - performance.now();
    if (remaining <= 0 || job.signal?.aborted) throw new Killed('timeout');
    const limits: ProcessLimits = {
      cpuSeconds: Math.ceil(job.timeoutMs / 1000) + 1,
      fileBytes: fileBytes ?? job.maxFileBytes,
      memoryBytes: MEMORY_BYTES,
      processes: PROCESSES,
    };
    const command = this.command(session, argv, limits);

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
      const result = warm ? await session.go({ ...limits, cpuSeconds: limits.cpuSeconds + WARM_CPU_SECONDS }, command, again) : await session.run(command);
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
