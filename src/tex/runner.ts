// Runs one TeX job in a sandboxed workspace: the engine as many passes as the document needs
// (bibtex/biber/makeindex in between), the page count from the PDF, then the workspace is
// deleted whatever happened. The source is written only into the workspace, never logged.
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../errors.js';
import type { Compiler } from '../quota/plans.js';
import { judgeHelper, planHelpers, type ReadFile } from './passes.js';
import { prlimit, type ProcessLimits } from './sandbox.js';
import { Session, type Exec } from './session.js';
import { collectWarnings, type TexWarning } from './warnings.js';

export const MAIN = 'main';
const MAX_PASSES = 5;
/** Files biblatex writes for biber (and reads back only to compare): biber's own key decides. */
const HELPER_CONTROL_FILES = /\.(bcf|run\.xml)$/;
/** Address space per process: enough for lualatex with large OpenType fonts. */
const MEMORY_BYTES = 4 * 1024 ** 3;
/** Processes per job (xelatex spawns xdvipdfmx; the rest spawn nothing). */
const PROCESSES = 32;
const WATCH_MS = 250;

export interface TexJob {
  source: string;
  compiler: Compiler;
  files?: ReadonlyArray<{ name: string; data: Buffer }>;
  timeoutMs: number;
  /** Largest file (the PDF included) the job may write. */
  maxFileBytes: number;
  /** When the PDF has more pages, deliver only the first `keepPages` (a preview). */
  keepPages?: number;
  signal?: AbortSignal;
}

/** `unmeasurable`: TeX wrote a PDF but its pages and size could not be read back. */
export type TexOutcome = 'ok' | 'failed' | 'timeout' | 'file_too_large' | 'unmeasurable';

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
  /** With ok: problems that did not stop delivery (undefined references, bibliography errors, …). */
  warnings?: TexWarning[];
}

export interface RunnerOptions {
  /** Parent of the per-job workspaces; job uids must be able to traverse it. */
  workRoot: string;
  isolate: boolean;
  /** Builds (once, on the first lualatex job) the luaotfload cache; see luacache.ts. */
  luaCache?: () => Promise<string>;
  /** Keep a started sandbox ready for the next job (default true). */
  warm?: boolean;
}

/** Engine flags: no shell escape, no interaction, stop at the first error, record files. */
export function engineArgs(compiler: Compiler): string[] {
  const common = ['-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder'];
  if (compiler === 'lualatex') return ['lualatex', '--nosocket', ...common, `${MAIN}.tex`];
  return [compiler, ...common, `${MAIN}.tex`];
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
    readonly outcome: 'timeout' | 'file_too_large',
    readonly file?: string,
  ) {
    super(outcome);
  }
}

function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function readIf(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}

/** Total bytes under a directory and its largest file. */
async function measure(dir: string): Promise<{ total: number; largest: string }> {
  let total = 0;
  let largest = { name: '', size: -1 };
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? dir, entry.name);
    const size = (await stat(path).catch(() => null))?.size ?? 0;
    total += size;
    if (size > largest.size) largest = { name: path.slice(dir.length + 1), size };
  }
  return { total, largest: largest.name };
}

export class TexRunner {
  private luaCache: Promise<string | undefined> | null = null;
  private luaCacheDir: string | undefined;
  private rootReady: Promise<void> | null = null;
  /** A warm sandbox per uid, started when the previous job on that uid ended. */
  private readonly spare = new Map<string, Promise<Session>>();
  private closed = false;
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly options: RunnerOptions) {}

  /** Runs a job as `uid` (an unprivileged id when the service runs as root). */
  async run(job: TexJob, uid?: number): Promise<TexResult> {
    const started = performance.now();
    const session = await this.session(uid, job.compiler === 'lualatex');
    const state = { passes: 0 };
    let stopped = true;
    try {
      await this.prepare(session, job);
      const result = await this.compile(session, job, state);
      stopped = false;
      return { ...result, passes: state.passes, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (!(err instanceof Killed)) throw err;
      const log = (await readIf(join(session.dir, `${MAIN}.log`)))?.toString('utf8') ?? '';
      return {
        outcome: err.outcome,
        log,
        passes: state.passes,
        durationMs: Math.round(performance.now() - started),
        ...(err.file ? { file: err.file } : {}),
      };
    } finally {
      // A finished job's sandbox is torn down off the caller's path (the uid's next sandbox
      // waits for it); a stopped job's is gone, every process of it, before we answer.
      const closing = session.close().catch(() => {});
      this.closing.add(closing);
      void closing.then(() => this.closing.delete(closing));
      this.warm(uid, closing);
      if (stopped) await closing;
    }
  }

  /** Ends the warm sandboxes (service shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    const spares = [...this.spare.values()];
    this.spare.clear();
    await Promise.all([...spares.map((s) => s.then((session) => session.close()).catch(() => {})), ...this.closing]);
  }

  /** The prepared font cache, or undefined when it cannot be built (lualatex then builds its own). */
  private preparedLuaCache(): Promise<string | undefined> {
    this.luaCache ??= (this.options.luaCache ? this.options.luaCache().catch(() => undefined) : Promise.resolve(undefined)).then(
      (dir) => (this.luaCacheDir = dir),
    );
    return this.luaCache;
  }

  private open(uid: number | undefined, after?: Promise<void>): Promise<Session> {
    this.rootReady ??= (async () => {
      // Job uids must traverse the root (0711) but not list it; each workspace is 0700 and theirs.
      await mkdir(this.options.workRoot, { recursive: true });
      await chmod(this.options.workRoot, 0o711);
    })();
    return Promise.all([this.rootReady, after]).then(() =>
      Session.open(this.options.workRoot, uid, {
        isolate: this.options.isolate,
        env: this.options.isolate
          ? TEX_ENV
          : { ...TEX_ENV, TEXMFVAR: HOST_TEXMFVAR, TEXMFCACHE: HOST_TEXMFVAR, TEXMFHOME: '.texmf' },
        ...(this.luaCacheDir ? { luaCache: this.luaCacheDir } : {}),
      }),
    );
  }

  private warm(uid: number | undefined, after: Promise<void>): void {
    if (this.closed || this.options.warm === false) return;
    const spare = this.open(uid, after);
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

  private async prepare(session: Session, job: TexJob): Promise<void> {
    const dir = session.dir;
    await writeFile(join(dir, `${MAIN}.tex`), job.source);
    for (const file of job.files ?? []) {
      // Plain names with at most one folder (chapters/intro.tex), none of the job's own files (main.*, preview.pdf).
      if (!/^(?:[A-Za-z0-9_-]+\/)?[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(file.name) || file.name.startsWith(`${MAIN}.`) || file.name === 'preview.pdf') {
        throw new ServiceError('invalid_asset_filename', `The asset name "${file.name}" is reserved or not a plain file name.`, {
          name: file.name,
        });
      }
      const slash = file.name.indexOf('/');
      if (slash > 0) await mkdir(join(dir, file.name.slice(0, slash)), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, file.name), file.data, { flag: 'wx' });
    }
    if (session.uid !== undefined) {
      for (const entry of await readdir(dir, { recursive: true })) await chown(join(dir, entry), session.uid, session.uid);
    }
  }

  private async compile(session: Session, job: TexJob, state: { passes: number }) {
    const dir = session.dir;
    const deadline = performance.now() + job.timeoutMs;
    const exec = (argv: string[]) => this.exec(session, job, deadline, argv);
    // Every read of a file the job wrote goes through this one function.
    const read: ReadFile = (name) => readIf(join(dir, name));
    const sources = [job.source, ...(job.files ?? []).filter((f) => /\.(tex|sty|cls)$/.test(f.name)).map((f) => f.data.toString('utf8'))];
    const done = new Map<string, string>();
    const problems = new Map<string, Array<{ tool: string; message: string }>>();
    let log = '';
    let transcript: Buffer | null = null;

    while (state.passes < MAX_PASSES) {
      const before = await this.snapshot(dir);
      state.passes++;
      const pass = await exec(engineArgs(job.compiler));
      transcript = await read(`${MAIN}.log`);
      // No transcript at all means TeX never started: our fault, not the document's.
      if (!transcript) throw new Error(`TeX did not start: ${pass.output.slice(0, 2000)}`);
      log = transcript.toString('utf8');
      // A pass may end without pages (a document that only prints a biblatex list before biber ran).
      const empty = pass.code === 0 && /^No pages of output\.$/m.test(log);
      if (pass.code !== 0 || (!empty && !(await read(`${MAIN}.pdf`)))) return { outcome: 'failed' as const, log };

      // Helpers run when their input changed since they last ran; a changed output forces a pass.
      let changed = false;
      const fls = (await read(`${MAIN}.fls`))?.toString('utf8') ?? '';
      for (const helper of await planHelpers(MAIN, { read, log, fls, sources, done })) {
        const outputs = await Promise.all(helper.outputs.map(async (name) => (await read(name)) ?? Buffer.alloc(0)));
        const result = await exec(helper.argv);
        const verdict = await judgeHelper(helper, result, read);
        if (verdict.fatal) return { outcome: 'failed' as const, log: `${log}\n${verdict.fatal}` };
        problems.set(helper.id, verdict.problems.map((message) => ({ tool: helper.tool, message })));
        for (const [i, name] of helper.outputs.entries()) {
          const now = (await read(name)) ?? Buffer.alloc(0);
          if (!now.equals(outputs[i]!)) changed = true;
        }
        // splitindex writes (and makeindex-es) files whose names only it knows.
        if (helper.outputs.length === 0) changed = true;
      }
      if (!changed && (empty || !(await this.needsRerun(dir, log, before)))) break;
    }
    const pdf = await readIf(join(dir, `${MAIN}.pdf`));
    if (!pdf) return { outcome: 'failed' as const, log };
    const warnings = collectWarnings(transcript ?? Buffer.from(log), job.compiler, [...problems.values()].flat());
    const counted = await exec(['qpdf', '--show-npages', `${MAIN}.pdf`]);
    const pages = Number(counted.output.trim());
    if (counted.code !== 0 || !Number.isInteger(pages) || pages < 1) {
      return { outcome: 'unmeasurable' as const, log: `${log}\nThe PDF could not be measured: ${counted.output.slice(0, 500)}` };
    }
    if (job.keepPages !== undefined && pages > job.keepPages) {
      const cut = await exec(['qpdf', `${MAIN}.pdf`, '--pages', '.', `1-${job.keepPages}`, '--', 'preview.pdf']);
      const preview = await readIf(join(dir, 'preview.pdf'));
      // qpdf exits 3 on warnings with a usable output.
      if ((cut.code === 0 || cut.code === 3) && preview) {
        return { outcome: 'ok' as const, pdf: preview, pages: job.keepPages, totalPages: pages, log, warnings };
      }
    }
    return { outcome: 'ok' as const, pdf, pages, totalPages: pages, log, warnings };
  }

  /** Hashes of the files a pass may read back (aux, toc, bbl, …) before it runs. */
  private async snapshot(dir: string): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || [`${MAIN}.tex`, `${MAIN}.pdf`, `${MAIN}.log`].includes(entry.name)) continue;
      const path = join(entry.parentPath ?? dir, entry.name);
      const data = await readIf(path);
      if (data && data.length <= 16 * 1024 * 1024) hashes.set(path.slice(dir.length + 1), sha(data));
    }
    return hashes;
  }

  /**
   * Another pass is needed when TeX says so, when a file this pass read was rewritten with
   * new content, or when a file it looked for and missed (a toc, a bbl) now exists. The .aux
   * of a plain document is written on the first pass but never needed: LaTeX itself warns
   * when labels or citations in it changed.
   */
  private async needsRerun(dir: string, log: string, before: Map<string, string>): Promise<boolean> {
    if (/Rerun to get|Please rerun|Please \(re\)run|may have changed\. Rerun|Rerun LaTeX|rerun LaTeX/i.test(log)) {
      return true;
    }
    const fls = (await readIf(join(dir, `${MAIN}.fls`)))?.toString('utf8') ?? '';
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
      const data = await readIf(join(dir, name));
      if (data && before.get(name) !== sha(data)) return true;
    }
    for (const match of log.matchAll(/^No file (\S+)\.$/gm)) {
      const name = match[1]!.replace(/^\.\//, '');
      if (name.endsWith('.aux')) continue;
      const size = (await stat(join(dir, name)).catch(() => null))?.size ?? 0;
      if (size > 0) return true;
    }
    return false;
  }

  /** One command in the job's sandbox, under the job's limits, its deadline and a disk watch. */
  private async exec(session: Session, job: TexJob, deadline: number, argv: string[]): Promise<Exec> {
    const remaining = deadline - performance.now();
    if (remaining <= 0 || job.signal?.aborted) throw new Killed('timeout');
    const limits: ProcessLimits = {
      cpuSeconds: Math.ceil(job.timeoutMs / 1000) + 1,
      fileBytes: job.maxFileBytes,
      memoryBytes: MEMORY_BYTES,
      processes: PROCESSES,
    };
    let command = [...prlimit(limits), ...argv];
    if (argv[0] === 'lualatex' && session.luaCache !== undefined) {
      // luaotfload needs a writable cache: the job starts from a copy of the prepared one.
      const target = this.options.isolate ? TEX_ENV.TEXMFVAR! : HOST_TEXMFVAR;
      command = ['sh', '-c', 'test -d "$1" || cp -r "$0" "$1"; shift; exec "$@"', session.luaCache, target, ...command];
    }

    let killed: Killed | null = null;
    const kill = (reason: Killed) => {
      killed ??= reason;
      session.kill();
    };
    const timer = setTimeout(() => kill(new Killed('timeout')), remaining);
    const onAbort = () => kill(new Killed('timeout'));
    job.signal?.addEventListener('abort', onAbort, { once: true });
    // Each file is capped by RLIMIT_FSIZE; the watch caps the workspace as a whole.
    const budget = 2 * job.maxFileBytes + 64 * 1024 * 1024;
    const watch = setInterval(() => {
      void measure(session.dir).then(({ total, largest }) => {
        if (total > budget) kill(new Killed('file_too_large', largest));
      });
    }, WATCH_MS);
    try {
      const result = await session.run(command);
      // RLIMIT_FSIZE kills with SIGXFSZ, which the shell reports as 128 + 25.
      if (result.code === 128 + 25) throw new Killed('file_too_large', (await measure(session.dir)).largest);
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
