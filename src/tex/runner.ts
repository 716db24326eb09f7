// Runs one TeX job in one sandbox (a session, sandbox/session.ts): the sandbox the job's start
// names (JobStart, caches/job-start.ts: cold in the uid's warm sandbox, from a preamble format,
// from a primed sandbox or a paused process), the job's files written into it, the passes
// (pass-loop.ts), and the workspace deleted whatever happened. The source is written only into
// the workspace, never logged. Which sandbox a cold job gets is the pool's (sandbox/pool.ts);
// how a job starts is the caches' (caches/), which hand the runner that one value and never
// call into it otherwise.
import { lchown, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JobFileNameError } from './errors.js';
import { FORMAT, FORMAT_ENGINE, type JobRunner, type TexJob, type TexResult, type TexStages } from './job.js';
import { COLD, startFormatEngine, type JobFormat, type JobStart } from './caches/job-start.js';
import { PAUSED_ENGINE } from './caches/paused.js';
import { outputFiles, outputSource } from './output/source.js';
import type { WarmValidators } from './output/warm-validator.js';
import { Killed, runPasses, WholeMapNeeded, workspaceOf, type PassState } from './pass-loop.js';
import { isJobOwnPath, pathProblem } from './project/paths.js';
import { demoteLater } from './sandbox/demote.js';
import { SandboxPool, type PoolOptions } from './sandbox/pool.js';
import type { Session } from './sandbox/session.js';
import { MAIN, WorkspaceViolation } from './sandbox/workspace.js';

export type RunnerOptions = PoolOptions;

export class TexRunner implements JobRunner {
  /** The runner's sandboxes: the caches make their own there (a paused process, a primed format, a format build). */
  readonly pool: SandboxPool;

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
   * Runs a job as `uid` (an unprivileged id when the service runs as root) the way `start`
   * says: cold in the uid's warm sandbox (the default), or from what a cache made for it. A
   * primed or paused sandbox is the job's alone and is ended with it.
   */
  async run(job: TexJob, uid?: number, start: JobStart = COLD): Promise<TexResult> {
    const started = performance.now();
    const result = await this.attempt(job, uid, start, false);
    if (result !== 'whole map') return result;
    // Warm pdflatex and a core-map format's engines read the core map: the job runs again without either.
    // The job's timeout covers both attempts: a document cannot double its time by asking for a font.
    const left = Math.max(0, job.timeoutMs - (performance.now() - started));
    const again = await this.attempt({ ...job, timeoutMs: left }, uid, COLD, true);
    if (again === 'whole map') throw new Error('a pass with the whole font map asked for it again');
    again.stages = { ...again.stages, fontmap: performance.now() - started - again.durationMs };
    again.durationMs = Math.round(performance.now() - started);
    return again;
  }

  /** `run`, once: with `wholeMap`, no pass reads the core font map (its warm pdflatex is not used). */
  private async attempt(job: TexJob, uid: number | undefined, start: JobStart, wholeMap: boolean): Promise<TexResult | 'whole map'> {
    const started = performance.now();
    const format = start.from === 'format' || start.from === 'primed' ? start.format : undefined;
    const own = start.from === 'primed' || start.from === 'paused' ? start.session : undefined;
    const session = own ?? (await this.pool.take(uid, job.compiler));
    const stages: TexStages = {};
    const state: PassState = { passes: 0, stages, paused: false, wholeMap };
    let stopped = true;
    // Only jobs of best-effort callers yield: demoting every long job would starve them all under a stream of short ones.
    const undemote = demoteLater(() => session.pid, job.fairness?.yields ? (this.options.demoteAfterMs ?? 0) : 0);
    try {
      // A paused preamble's sandbox: its engine waits for the go-line, written only once every file of the job is in place.
      // A primed sandbox holds the format and runs its engine already.
      const primed = session.engine === FORMAT_ENGINE;
      await prepareWorkspace(session, job, primed ? undefined : format);
      // The job's first pass starts warm with the format (the slot's warm engine has the base one).
      if (format && !primed) await startFormatEngine(this.pool, session, format);
      stages.sandbox = performance.now() - started;
      const result = await runPasses({ pool: this.pool, session, job, format, hardenLua: this.options.hardenLua !== false, validators: this.validators, state });
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
      await (own ? this.pool.discard(session, stopped) : this.pool.release(session, uid, stopped));
      // The result (already built) holds this same object.
      stages.cleanup = performance.now() - releasing;
    }
  }
}

/**
 * Writes the job into its sandbox's workspace: main.tex (with the output step's additions), the
 * format a job starts from, the job's files (the last check of their names) and the output
 * step's own files, all owned by the sandbox's uid. Nothing of the job has run yet.
 */
export async function prepareWorkspace(session: Session, job: TexJob, format?: JobFormat): Promise<void> {
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
