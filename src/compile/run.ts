// The run of a checked compile: its TeX job (files, limits, the preamble cache's pool, the
// queue's fairness), served from the result cache or run on the TeX queue, once more going on
// past errors when the request asks for that (on_error "continue").
import type { Clock } from '../clock.js';
import { errors } from '../errors.js';
import { callerId } from '../quota/fair-use.js';
import { FAIR_USE, limitsOf } from '../quota/plans.js';
import type { TexQueue } from '../queue/queue.js';
import type { TexJob, TexResult } from '../tex/job.js';
import type { OutputSpec } from '../tex/output/spec.js';
import { XMPDATA_FILE } from '../tex/project/paths.js';
import type { CheckedRequest } from './request.js';
import { resultKey, type ResultCache } from './result-cache.js';
import type { CompileContext } from './types.js';

export interface RunDeps {
  clock: Clock;
  texQueue: TexQueue;
  /** Identical requests get the stored result without running TeX (see result-cache.ts). */
  results?: ResultCache | undefined;
}

/** Whose cached results and preamble formats a job may use: the caller's, or the public gallery's when nothing of the caller is in it. */
export function cacheScope(request: CheckedRequest, context: CompileContext): string {
  const { caller, assets } = request;
  const own = caller.kind === 'account' ? `account:${caller.account.id}` : `anonymous:${caller.ip}`;
  const shared = context.via === 'public_render' && assets.stored.length === 0 && assets.ephemeral.length === 0;
  return shared ? 'public' : own;
}

/** Nobody waits on an async job or a batch item: the queue serves them after interactive compiles. */
export function inBackground(context: CompileContext): boolean {
  return context.background === true || context.onAccepted !== undefined;
}

/** The TeX job of `request`, within the plan's time and the caller's deadline. */
export function jobOf(request: CheckedRequest, context: CompileContext, clock: Clock): TexJob {
  const { plan } = request;
  const timeoutMs = Math.min(plan.timeoutSeconds * 1000, context.deadline !== undefined ? Math.max(0, context.deadline - clock.ms()) : Infinity);
  const files = [...request.assets.files, ...request.files];
  checkNoCollision(files, request.output);
  const scope = cacheScope(request, context);
  return {
    source: request.latex,
    compiler: request.compiler,
    ...(request.texlive !== 'host' ? { texlive: request.texlive } : {}),
    files,
    timeoutMs,
    maxFileBytes: plan.maxFileBytes,
    ...(plan.previews ? { keepPages: limitsOf(plan.tier).maxPages } : {}),
    // The preamble cache's pool: the caller's own, or the gallery's shared one (see cacheScope).
    preamble: { scope: scope === 'public' ? 'gallery' : scope, day: clock.now().toISOString().slice(0, 10) },
    fairness: { caller: callerId(request.caller), background: inBackground(context), yields: FAIR_USE[plan.tier].yieldsCpu },
    ...(request.output ? { output: request.output } : {}),
  };
}

/** Runs `job` of `request`: from the result cache or TeX, recovering past errors when asked. */
export function runJob(deps: RunDeps, request: CheckedRequest, context: CompileContext, job: TexJob): Promise<TexResult> {
  return recovering(request.onError, (attempt) => cachedRun(deps, request, context, attempt), job);
}

/**
 * With on_error "continue", a job TeX failed on runs again going on past errors, cold (the
 * warm engines, formats and paused preambles halt on errors, so the first run keeps them for
 * every document that compiles). A PDF from that run is the result; without one the first
 * run's transcript gives SPEC's diagnosis.
 */
async function recovering(onError: 'stop' | 'continue', run: (job: TexJob) => Promise<TexResult>, job: TexJob): Promise<TexResult> {
  const first = await run(job);
  if (first.outcome !== 'failed' || onError !== 'continue') return first;
  const { preamble: _warm, ...cold } = job;
  const again = await run({ ...cold, continueOnError: true, timeoutMs: Math.max(1, job.timeoutMs - first.durationMs) });
  const durationMs = first.durationMs + again.durationMs;
  return again.outcome === 'failed' ? { ...first, durationMs } : { ...again, passes: first.passes + again.passes, durationMs };
}

/**
 * The job's result from the result cache, or TeX's (then kept). The key holds the plan's
 * limits, not the render deadline: a delivered result does not depend on how long it took.
 * Public gallery renders share one scope unless the caller's own assets are in the job.
 */
async function cachedRun(deps: RunDeps, request: CheckedRequest, context: CompileContext, job: TexJob): Promise<TexResult> {
  const cache = deps.results;
  if (!cache) return deps.texQueue.run(job);
  const key = resultKey({
    scope: cacheScope(request, context),
    ...(job.texlive !== undefined ? { texlive: job.texlive } : {}),
    compiler: job.compiler,
    source: job.source,
    files: job.files ?? [],
    timeoutMs: request.plan.timeoutSeconds * 1000,
    maxFileBytes: job.maxFileBytes,
    keepPages: job.keepPages,
    ...(job.continueOnError ? { continueOnError: true } : {}),
    // Passwords enter only this hash, never a stored or logged value.
    ...(job.output ? { output: JSON.stringify(job.output, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)) } : {}),
    day: deps.clock.now().toISOString().slice(0, 10),
  });
  const started = deps.clock.ms();
  const hit = cache.get(key);
  if (hit) {
    return { ...hit, passes: 0, durationMs: Math.round(deps.clock.ms() - started) };
  }
  const result = await deps.texQueue.run(job);
  cache.set(key, result);
  return result;
}

/**
 * Two files of one job under one name: a name in `files` or `assets` that the service also
 * writes (graphics.cfg beside an SVG asset, an SVG's converted `<name>.svg.pdf`, main.xmpdata
 * when the output step asks for a PDF standard). Refused with the file named, before any
 * quota is charged; never a 500.
 */
function checkNoCollision(files: ReadonlyArray<{ name: string }>, output: OutputSpec | undefined): void {
  const seen = new Set<string>();
  for (const { name } of files) {
    if (output?.pdfStandard !== undefined && name.toLowerCase() === XMPDATA_FILE) {
      throw errors.invalid_asset_filename(
        `The file "${name}" is written by the service for "pdf_standard" (from "metadata"); leave it out of "files", or set the metadata in "metadata".`,
        { file: name, reason: 'reserved' },
      );
    }
    if (seen.has(name)) {
      throw errors.invalid_asset_filename(
        `The file name "${name}" is taken by a file the service writes into the job itself (graphics.cfg with SVG assets, <name>.svg.pdf for an SVG); rename your file.`,
        { file: name, reason: 'reserved' },
      );
    }
    seen.add(name);
  }
}
