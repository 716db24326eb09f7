// Runs one TeX job in a sandboxed workspace: the engine as many passes as the document needs
// (bibtex/biber/makeindex in between), the page count from the PDF, then the workspace is
// deleted whatever happened. The source is written only into the workspace, never logged.
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../errors.js';
import type { Compiler } from '../quota/plans.js';
import { prlimit, type ProcessLimits } from './sandbox.js';
import { Session, type Exec } from './session.js';

export const MAIN = 'main';
const MAX_PASSES = 5;
/** Address space per process: enough for lualatex with large OpenType fonts. */
const MEMORY_BYTES = 4 * 1024 ** 3;
/** Processes per job (xelatex spawns xdvipdfmx; the rest spawn nothing). */
const PROCESSES = 32;
const WATCH_MS = 250;

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
      // Plain names only, and none of the job's own files (main.*, preview.pdf).
      if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(file.name) || file.name.startsWith(`${MAIN}.`) || file.name === 'preview.pdf') {
        throw new ServiceError('invalid_asset_filename', `The asset name "${file.name}" is reserved or not a plain file name.`, {
          name: file.name,
        });
      }
      await writeFile(join(dir, file.name), file.data, { flag: 'wx' });
    }
    if (session.uid !== undefined) {
      for (const name of await readdir(dir)) await chown(join(dir, name), session.uid, session.uid);
    }
  }

  private async compile(session: Session, job: TexJob, state: { passes: number }) {
    const dir = session.dir;
    const deadline = performance.now() + job.timeoutMs;
    const exec = (argv: string[]) => this.exec(session, job, deadline, argv);
    const done: Record<string, string> = {};
    let log = '';

    while (state.passes < MAX_PASSES) {
      const before = await this.snapshot(dir);
      state.passes++;
      const pass = await exec(engineArgs(job.compiler));
      const transcript = await readIf(join(dir, `${MAIN}.log`));
      // No transcript at all means TeX never started: our fault, not the document's.
      if (!transcript) throw new Error(`TeX did not start: ${pass.output.slice(0, 2000)}`);
      log = transcript.toString('utf8');
      if (pass.code !== 0 || !(await readIf(join(dir, `${MAIN}.pdf`)))) return { outcome: 'failed' as const, log };

      // Helpers run when their input changed since they last ran; their output forces a pass.
      let helped = false;
      for (const helper of await this.helpersNeeded(dir, log, done)) {
        const result = await exec(helper);
        helped = true;
        // bibtex exits 1 on warnings; 2 and above are errors. makeindex problems are not fatal.
        if (result.code > (helper[0] === 'bibtex' ? 1 : 0) && helper[0] !== 'makeindex') {
          const blg = (await readIf(join(dir, `${MAIN}.blg`)))?.toString('utf8') ?? '';
          return { outcome: 'failed' as const, log: `${log}\n${helper[0]} failed:\n${blg || result.output}` };
        }
      }
      if (!helped && !(await this.needsRerun(dir, log, before))) break;
    }
    const pdf = await readIf(join(dir, `${MAIN}.pdf`));
    if (!pdf) return { outcome: 'failed' as const, log };
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
        return { outcome: 'ok' as const, pdf: preview, pages: job.keepPages, totalPages: pages, log };
      }
    }
    return { outcome: 'ok' as const, pdf, pages, totalPages: pages, log };
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
      if (!outputs.has(name) || !before.has(name)) continue;
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

  private async helpersNeeded(dir: string, log: string, done: Record<string, string>): Promise<string[][]> {
    const helpers: string[][] = [];
    const aux = (await readIf(join(dir, `${MAIN}.aux`)))?.toString('utf8') ?? '';
    const bcf = await readIf(join(dir, `${MAIN}.bcf`));
    if (bcf) {
      const key = sha(bcf);
      if (done.biber !== key && (done.biber === undefined || /run Biber/i.test(log))) {
        done.biber = key;
        helpers.push(['biber', '--nolog', MAIN]);
      }
    } else if (/\\bibdata\{/.test(aux)) {
      const key = sha(Buffer.from(aux.split('\n').filter((l) => /^\\(citation|bibdata|bibstyle)\{/.test(l)).join('\n')));
      if (done.bibtex !== key) {
        done.bibtex = key;
        helpers.push(['bibtex', MAIN]);
      }
    }
    const idx = await readIf(join(dir, `${MAIN}.idx`));
    if (idx && idx.length > 0) {
      const key = sha(idx);
      if (done.makeindex !== key) {
        done.makeindex = key;
        helpers.push(['makeindex', '-q', `${MAIN}.idx`]);
      }
    }
    return helpers;
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
