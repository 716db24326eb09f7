// Runs one TeX job: a fresh workspace, the engine in the sandbox as many passes as the
// document needs (bibtex/biber/makeindex in between), the page count, then the workspace is
// deleted whatever happened. The source is written only into the workspace, never logged.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmod, chown, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Compiler } from '../quota/plans.js';
import { sandboxed, SANDBOX_LUA_CACHE, type ProcessLimits, type SandboxSpec } from './sandbox.js';

export const MAIN = 'main';
const MAX_PASSES = 5;
/** Address space per process: enough for lualatex with large OpenType fonts. */
const MEMORY_BYTES = 4 * 1024 ** 3;
/** Processes per job (xelatex spawns xdvipdfmx; the rest spawn nothing). */
const PROCESSES = 32;
/** Kept of a helper's stdout/stderr: enough to explain a failure. */
const STREAM_CAP = 256 * 1024;
const WATCH_MS = 250;

export interface TexJob {
  source: string;
  compiler: Compiler;
  files?: ReadonlyArray<{ name: string; data: Buffer }>;
  timeoutMs: number;
  /** Largest file (the PDF included) the job may write. */
  maxFileBytes: number;
  signal?: AbortSignal;
}

export type TexOutcome = 'ok' | 'failed' | 'timeout' | 'file_too_large';

export interface TexResult {
  outcome: TexOutcome;
  /** The PDF when outcome is ok. */
  pdf?: Buffer;
  pages?: number;
  /** TeX's transcript (main.log), plus the output of a failing helper. */
  log: string;
  passes: number;
  durationMs: number;
  /** With file_too_large: the file that hit the cap. */
  file?: string;
}

export interface RunnerOptions {
  /** Parent of the per-job workspaces. */
  workRoot: string;
  isolate: boolean;
  /** Builds (once, on the first lualatex job) the luaotfload cache; see luacache.ts. */
  luaCache?: () => Promise<string>;
}

/** Engine flags: no shell escape, no interaction, stop at the first error, record files. */
export function engineArgs(compiler: Compiler): string[] {
  const common = ['-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', '-file-line-error', '-recorder'];
  if (compiler === 'lualatex') return ['lualatex', '--nosocket', ...common, `${MAIN}.tex`];
  return [compiler, ...common, `${MAIN}.tex`];
}

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

/** Without the sandbox there is no private /tmp: TeX's caches go into the workspace. */
function hostVar(dir: string): Record<string, string> {
  return { TEXMFVAR: join(dir, '.texmf-var'), TEXMFCACHE: join(dir, '.texmf-var'), TEXMFHOME: join(dir, '.texmf') };
}

interface Exec {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

class Killed extends Error {
  constructor(readonly outcome: 'timeout' | 'file_too_large', readonly file?: string) {
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
async function measure(dir: string): Promise<{ total: number; largest: { name: string; size: number } }> {
  let total = 0;
  let largest = { name: '', size: 0 };
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? dir, entry.name);
    const size = (await stat(path).catch(() => null))?.size ?? 0;
    total += size;
    if (size > largest.size) largest = { name: path.slice(dir.length + 1), size };
  }
  return { total, largest };
}

/** True while a live (non-zombie) process runs as `uid`. */
async function anyProcessOf(uid: number): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const owner = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (owner === String(uid) && /^State:\s+[^Z]/m.test(status)) return true;
  }
  return false;
}

/** After a kill: wait (briefly) until the kernel has taken down every process of the job. */
async function gone(uid: number | undefined): Promise<void> {
  if (uid === undefined) return;
  const until = performance.now() + 2000;
  while (performance.now() < until && (await anyProcessOf(uid))) await new Promise((r) => setTimeout(r, 10));
}

export class TexRunner {
  private luaCache: Promise<string | undefined> | null = null;
  private rootReady = false;

  constructor(private readonly options: RunnerOptions) {}

  /** The prepared font cache, or undefined when it cannot be built (lualatex then builds its own per job). */
  private preparedLuaCache(): Promise<string | undefined> {
    this.luaCache ??= this.options.luaCache ? this.options.luaCache().catch(() => undefined) : Promise.resolve(undefined);
    return this.luaCache;
  }

  /** Runs a job as `uid` (an unprivileged id when the service runs as root). */
  async run(job: TexJob, uid?: number): Promise<TexResult> {
    const started = performance.now();
    if (!this.rootReady) {
      // Job uids must traverse the root (0711) but not list it; each job dir is 0700 and theirs.
      await mkdir(this.options.workRoot, { recursive: true });
      await chmod(this.options.workRoot, 0o711);
      this.rootReady = true;
    }
    const dir = join(this.options.workRoot, randomUUID());
    await mkdir(dir, { mode: 0o700 });
    const state = { passes: 0 };
    try {
      await this.prepare(dir, job, uid);
      const result = await this.compile(dir, job, uid, state);
      return { ...result, passes: state.passes, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (!(err instanceof Killed)) throw err;
      const log = (await readIf(join(dir, `${MAIN}.log`)))?.toString('utf8') ?? '';
      return {
        outcome: err.outcome,
        log,
        passes: state.passes,
        durationMs: Math.round(performance.now() - started),
        ...(err.file ? { file: err.file } : {}),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async prepare(dir: string, job: TexJob, uid?: number): Promise<void> {
    await writeFile(join(dir, `${MAIN}.tex`), job.source);
    for (const file of job.files ?? []) await writeFile(join(dir, file.name), file.data);
    if (uid !== undefined) {
      await chown(dir, uid, uid);
      for (const name of await readdir(dir)) await chown(join(dir, name), uid, uid);
    }
  }

  private async compile(dir: string, job: TexJob, uid: number | undefined, state: { passes: number }) {
    const deadline = performance.now() + job.timeoutMs;
    const exec = (argv: string[]) => this.exec(dir, job, uid, deadline, argv);
    const done: Record<string, string> = {};
    const helperLogs: string[] = [];
    let log = '';

    while (state.passes < MAX_PASSES) {
      const before = await this.snapshot(dir);
      state.passes++;
      const pass = await exec(engineArgs(job.compiler));
      const transcript = await readIf(join(dir, `${MAIN}.log`));
      // No transcript at all means TeX never started: our fault, not the document's.
      if (!transcript) throw new Error(`TeX did not start: ${pass.output.slice(0, 2000)}`);
      log = transcript.toString('utf8');
      const pdf = await readIf(join(dir, `${MAIN}.pdf`));
      if (pass.code !== 0 || !pdf) {
        return { outcome: 'failed' as const, log };
      }
      // Helpers run when their input changed since they last ran; their output forces a pass.
      let helped = false;
      for (const helper of await this.helpersNeeded(dir, log, done)) {
        const result = await exec(helper.argv);
        helped = true;
        // bibtex exits 1 on warnings; 2 and above are errors.
        if (result.code !== 0 && !(helper.argv[0] === 'bibtex' && result.code === 1)) {
          const blg = (await readIf(join(dir, `${MAIN}.blg`)))?.toString('utf8') ?? '';
          helperLogs.push(`${helper.argv[0]} failed:\n${blg || result.output}`);
          if (helper.argv[0] !== 'makeindex') return { outcome: 'failed' as const, log: `${log}\n${helperLogs.join('\n')}` };
        }
      }
      if (!helped && !(await this.needsRerun(dir, log, before, state.passes))) {
        return this.finish(exec, pdf, log);
      }
    }
    const pdf = await readIf(join(dir, `${MAIN}.pdf`));
    if (!pdf) return { outcome: 'failed' as const, log };
    return this.finish(exec, pdf, log);
  }

  private async finish(exec: (argv: string[]) => Promise<Exec>, pdf: Buffer, log: string) {
    const counted = await exec(['qpdf', '--show-npages', `${MAIN}.pdf`]);
    const pages = Number(counted.output.trim());
    if (counted.code !== 0 || !Number.isInteger(pages)) {
      return { outcome: 'failed' as const, log: `${log}\nThe PDF could not be read: ${counted.output.slice(0, 500)}` };
    }
    return { outcome: 'ok' as const, pdf, pages, log };
  }

  /** Hashes of the files a pass may read back (aux, toc, bbl, …) before it runs. */
  private async snapshot(dir: string): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.endsWith('.pdf') || entry.name.endsWith('.log')) continue;
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
  private async needsRerun(dir: string, log: string, before: Map<string, string>, pass: number): Promise<boolean> {
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
      if (size > 0 && pass < MAX_PASSES) return true;
    }
    return false;
  }

  private async helpersNeeded(dir: string, log: string, done: Record<string, string>) {
    const helpers: Array<{ argv: string[] }> = [];
    const aux = (await readIf(join(dir, `${MAIN}.aux`)))?.toString('utf8') ?? '';
    const bcf = await readIf(join(dir, `${MAIN}.bcf`));
    if (bcf && (/Please \(re\)run Biber|run Biber/i.test(log) || done.biber === undefined)) {
      const key = sha(bcf);
      if (done.biber !== key) {
        done.biber = key;
        helpers.push({ argv: ['biber', '--nolog', MAIN] });
      }
    } else if (/\\bibdata\{/.test(aux)) {
      const key = sha(Buffer.from(aux.split('\n').filter((l) => /^\\(citation|bibdata|bibstyle)\{/.test(l)).join('\n')));
      if (done.bibtex !== key) {
        done.bibtex = key;
        helpers.push({ argv: ['bibtex', MAIN] });
      }
    }
    const idx = await readIf(join(dir, `${MAIN}.idx`));
    if (idx && idx.length > 0) {
      const key = sha(idx);
      if (done.makeindex !== key) {
        done.makeindex = key;
        helpers.push({ argv: ['makeindex', '-q', `${MAIN}.idx`] });
      }
    }
    return helpers;
  }

  private async exec(dir: string, job: TexJob, uid: number | undefined, deadline: number, argv: string[]): Promise<Exec> {
    const luaCache = argv[0] === 'lualatex' ? await this.preparedLuaCache() : undefined;
    const remaining = deadline - performance.now();
    if (remaining <= 0 || job.signal?.aborted) throw new Killed('timeout');
    const limits: ProcessLimits = {
      cpuSeconds: Math.ceil(job.timeoutMs / 1000) + 1,
      fileBytes: job.maxFileBytes,
      memoryBytes: MEMORY_BYTES,
      processes: PROCESSES,
    };
    let env: Record<string, string> = this.options.isolate ? TEX_ENV : { ...TEX_ENV, ...hostVar(dir) };
    let command = argv;
    const lua = luaCache !== undefined;
    if (lua) {
      // luaotfload needs a writable cache: each job starts from a copy of the prepared one.
      const cache = env.TEXMFVAR!;
      const source = this.options.isolate ? SANDBOX_LUA_CACHE : luaCache;
      env = { ...env, TEXMFCACHE: cache };
      command = ['sh', '-c', 'cp -r "$0" "$1" 2>/dev/null; shift; exec "$@"', source, cache, ...argv];
    }
    const spec: SandboxSpec = {
      workspace: dir,
      env,
      limits,
      isolate: this.options.isolate,
      ...(lua && this.options.isolate ? { luaCache } : {}),
    };
    const { file, args, cwd, env: spawnEnv } = sandboxed(spec, command);
    return new Promise<Exec>((resolve, reject) => {
      const child = spawn(file, args, {
        cwd,
        env: spawnEnv ?? {},
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        ...(uid !== undefined ? { uid, gid: uid } : {}),
      });
      let output = '';
      const collect = (chunk: Buffer) => {
        if (output.length < STREAM_CAP) output += chunk.toString('utf8');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      let killed: Killed | null = null;
      const kill = (reason: Killed) => {
        if (killed) return;
        killed = reason;
        try {
          // The whole group: bwrap, and with it (die-with-parent, PID namespace) every process of the job.
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => kill(new Killed('timeout')), remaining);
      const onAbort = () => kill(new Killed('timeout'));
      job.signal?.addEventListener('abort', onAbort, { once: true });
      // Per-file size is capped by RLIMIT_FSIZE; the watch caps the workspace as a whole.
      const budget = 2 * job.maxFileBytes + 64 * 1024 * 1024;
      const watch = setInterval(() => {
        void measure(dir).then(({ total, largest }) => {
          if (total > budget) kill(new Killed('file_too_large', largest.name));
        });
      }, WATCH_MS);
      child.on('error', (err) => {
        clearTimeout(timer);
        clearInterval(watch);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        clearInterval(watch);
        job.signal?.removeEventListener('abort', onAbort);
        if (killed) return void gone(uid).then(() => reject(killed));
        // RLIMIT_FSIZE kills with SIGXFSZ; bwrap reports a child's signal as 128 + its number.
        if (signal === 'SIGXFSZ' || code === 128 + 25) {
          void measure(dir).then(({ largest }) => reject(new Killed('file_too_large', largest.name)));
          return;
        }
        resolve({ code, signal, output });
      });
    });
  }
}
