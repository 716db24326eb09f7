// The preamble cache as a layer around the runner (the way compile/tex-queue.ts wraps the
// queue): a pdflatex job whose preamble has a verified format in its scope runs with it, and
// a failure that might be the format's runs again cold; a delivered job whose preamble had
// none may have one built, off the request path, when the machine is quiet. What a key is
// and what is refused: preamble.ts; the store: format-cache.ts; the build: format-build.ts.
import { availableParallelism } from 'node:os';
import { buildFormat, FORMAT_CAP, inBuildSandbox, type BuildOutcome } from './format-build.js';
import type { FormatCache } from './format-cache.js';
import { MEMORY_BYTES, PROCESSES, type JobRunner, type TexJob, type TexResult } from '../job.js';
import { outputSource } from '../output/source.js';
import type { JobFormat } from './job-start.js';
import { preambleKey, refusal, splitPreamble } from './preamble.js';
import type { PrimedFormats } from './primed-formats.js';
import type { TexRunner } from '../runner.js';
import { contradicts, doubtful, taggedDoubt, TexliveRefresh } from './trust.js';

/** A format build's wall clock, CPU per command, and the workspace it may fill. */
const BUILD_MS = 60_000;
/** A tagged preamble's build: its five cold passes each load the kernel's tagging code (about 1.5 s each on a quiet machine). */
const TAGGED_BUILD_MS = 180_000;
const BUILD_CPU_SECONDS = 30;
const BUILD_DISK = 512 * 1024 * 1024;

/** What the cache needs of the runner beneath it: runs (from a format), and its sandboxes for a build. */
export type FormatRunner = Pick<TexRunner, 'run' | 'start' | 'close' | 'pool'>;

export interface PreambleCacheOptions {
  /** The store; with no bytes to spend (maxBytes 0) every job passes straight through. */
  formats: FormatCache;
  /** The TeX image whose identity goes into every key; none: the host's TeX Live. */
  root: string | undefined;
  /** Told how each format build ended (tests, logs). */
  onFormatBuild?: (outcome: { admitted: boolean; reason?: string }) => void;
  /** Sandboxes started ahead with a format's engine (primed-formats.ts); none: each job starts its own. */
  primed?: PrimedFormats;
  /** Where a format is built (default: inBuildSandbox, a fresh sandbox of the runner's pool); the cache's own tests script it. */
  buildSandbox?: typeof inBuildSandbox;
}

interface Lookup {
  key: string;
  /** main.tex as the job's passes read it (a tagged job's with the output step's lines). */
  source: string;
  /** Lines of the preamble: an error on a later line of main.tex is the body's. */
  lines: number;
  format?: JobFormat;
}

export class PreambleCache implements JobRunner {
  /** Jobs running now: a format build waits for a quieter moment. */
  private active = 0;
  private closed = false;
  /** The format build under way (at most one), and how to stop it. */
  private building: Promise<void> | null = null;
  private stopBuild: AbortController | null = null;
  private readonly texliveId: TexliveRefresh;

  constructor(
    private readonly runner: FormatRunner,
    private readonly options: PreambleCacheOptions,
  ) {
    this.texliveId = new TexliveRefresh(options.root);
  }

  start(): Promise<string[]> {
    return this.runner.start();
  }

  /** Ends the runner and any format build (service shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopBuild?.abort();
    await this.options.primed?.close();
    // The build's sandbox is gone before the runner closes (and removes the process's folder).
    await this.formatsIdle();
    await this.runner.close();
  }

  /** Resolves when no format build is under way (tests). */
  async formatsIdle(): Promise<void> {
    while (this.building) await this.building;
  }

  async run(job: TexJob, uid?: number): Promise<TexResult> {
    const cached = await this.lookup(job);
    this.active++;
    let result: TexResult;
    try {
      if (cached?.format) return await this.runWithFormat(job, uid, cached);
      result = await this.runner.run(job, uid);
    } finally {
      this.active--;
    }
    if (cached && result.outcome === 'ok') this.scheduleBuild(job, cached, uid);
    return result;
  }

  /** The job with its format; when the outcome may be the format's, again cold. */
  private async runWithFormat(job: TexJob, uid: number | undefined, cached: Lookup): Promise<TexResult> {
    const started = performance.now();
    const primed = this.options.primed;
    const session = (await primed?.take(uid, cached.key)) ?? undefined;
    if (session) this.options.formats.stats.primed++;
    const start = session ? { from: 'primed' as const, format: cached.format!, session } : { from: 'format' as const, format: cached.format! };
    const withFormat = await this.runner.run(job, uid, start).catch(() => null);
    const tagged = job.output?.tagging !== undefined;
    if (withFormat && !doubtful(withFormat, cached.lines) && !taggedDoubt(withFormat, tagged)) {
      // The next job of this preamble on this uid finds its engine started.
      primed?.replenish(uid, cached.key, cached.format!, withFormat.passes > 1);
      return withFormat;
    }
    primed?.forget(cached.key);
    // The cold run gets what is left of the job's time (at least a second).
    const spent = performance.now() - started;
    const cold = await this.runner.run({ ...job, timeoutMs: Math.max(1000, job.timeoutMs - spent) }, uid);
    // A tagged job the cold run answered alike (a document whose own structure fails a check) keeps its format.
    if (!withFormat || (cold.outcome === 'ok' && (!taggedDoubt(withFormat, tagged) || contradicts(withFormat, cold)))) {
      // The format did what a cold run would not: it goes, and is not built again.
      this.options.formats.refuse(cached.key);
      this.options.formats.stats.rejections++;
    }
    return { ...cold, durationMs: Math.round(performance.now() - started) };
  }

  /**
   * The job's preamble key and, on a hit, its format. Null when the job cannot use the
   * cache: not pdflatex, no scope, no \begin{document} line, a refused preamble, or an
   * unknown TeX Live.
   */
  private async lookup(job: TexJob): Promise<Lookup | null> {
    const formats = this.options.formats;
    if (!formats.enabled || job.compiler !== 'pdflatex' || !job.preamble) return null;
    const source = formatSource(job);
    if (source === null) return null;
    const split = splitPreamble(source);
    if (!split || refusal(split.preamble, (job.files ?? []).map((file) => file.name)) !== null) return null;
    const texlive = await this.texliveId.get();
    if (texlive === null) return null;
    // A tagged job's preamble is the one the output step writes: its \DocumentMetadata (language,
    // standards, PDF version) and metadata are in the key, so two standards never share a format.
    const key = preambleKey({ ...job.preamble, engine: 'pdflatex', preamble: split.preamble, texlive: texlive.id });
    const entry = formats.lookup(key, job.files ?? []);
    return { key, lines: split.lines, source, ...(entry ? { format: entry } : {}) };
  }

  /**
   * Builds the job's preamble format off the request path: one build at a time, none while
   * the machine is busy with jobs or the cache closes, in a fresh sandbox as the same uid
   * holding a copy of the job (see format-build.ts). Only a verified format is kept.
   */
  private scheduleBuild(job: TexJob, lookup: Lookup, uid: number | undefined): void {
    const { key } = lookup;
    const formats = this.options.formats;
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
    this.building = this.build(job, lookup, uid)
      .then((outcome) => {
        if (!('entry' in outcome) || this.closed || !formats.admit(key, outcome.entry)) return report(false, 'rejected' in outcome ? outcome.rejected : 'not kept');
        this.options.primed?.replenish(uid, key, outcome.entry);
        report(true);
      })
      .catch((err: Error) => report(false, err.message))
      .finally(() => (this.building = null));
  }

  private async build(job: TexJob, lookup: Lookup, uid: number | undefined): Promise<BuildOutcome> {
    const texlive = await this.texliveId.get();
    if (!texlive) return { rejected: 'TeX Live unknown' };
    const stop = new AbortController();
    this.stopBuild = stop;
    if (this.closed) stop.abort();
    const timer = setTimeout(() => stop.abort(), job.output?.tagging ? TAGGED_BUILD_MS : BUILD_MS);
    try {
      const limits = { cpuSeconds: BUILD_CPU_SECONDS, fileBytes: FORMAT_CAP, memoryBytes: MEMORY_BYTES, processes: PROCESSES };
      const input = { source: lookup.source, tagging: job.output?.tagging, files: job.files ?? [], day: job.preamble!.day, baseBytes: texlive.baseBytes, preambleLines: lookup.lines, fontMaps: this.runner.pool.fontMaps };
      return await (this.options.buildSandbox ?? inBuildSandbox)(this.runner.pool, job, uid, limits, BUILD_DISK, stop.signal, (run, workspace) => buildFormat(run, workspace, input));
    } finally {
      clearTimeout(timer);
      this.stopBuild = null;
    }
  }
}

/**
 * main.tex as a job with a format reads it, or null when no format may serve the job: PDF/A by
 * pdfx and attachments add to the preamble what a dump cannot keep (pdfx and embedfile write
 * PDF objects while they load), so such jobs run without one. A tagged job (issue 40) starts
 * with the kernel's \DocumentMetadata (tagging.ts): its tagging code is dumped with the rest
 * of the preamble, and its format is built and verified like any other, its structure tree and
 * conformance report compared with a cold compile's too (format-build.ts).
 */
export function formatSource(job: Pick<TexJob, 'source' | 'output' | 'compiler'>): string | null {
  const output = job.output;
  if ((output?.attachments?.length ?? 0) > 0 || (output?.pdfStandard !== undefined && !output.tagging)) return null;
  try {
    return (output && outputSource(job.source, output, job.compiler)) ?? job.source;
  } catch {
    // No \documentclass line: the runner refuses the job itself.
    return null;
  }
}
