// The compile pipeline every door shares (HTTP compile, render, public gallery, MCP):
// request rules → asset resolution → quota reservation → TeX → limits on the result →
// signed PDF link → commit. Anything that throws before the commit costs the caller nothing.
import { anonymousLinkPhrase, anonymousTierPhrase, freeKeyPhrase } from '../quota/prose.js';
import { randomUUID } from 'node:crypto';
import { deflateSync, strToU8 } from 'fflate';
import type { Logger } from 'pino';
import { tierOf, type Caller } from '../accounts/caller.js';
import { nextDayStart, nextMonthStart, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, ServiceError, invalidField, refused } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { links, openSignupUrl } from '../links.js';
import { CompileQuota, obtainKeyStep, type Ticket } from '../quota/compile-quota.js';
import type { Counters } from '../quota/counters.js';
import { callerId, FairUse, type FairTicket, type FairUseReport } from '../quota/fair-use.js';
import { anonymousDailyKey, monthlyCompilesKey } from '../quota/keys.js';
import { FAIR_USE, graceAllowance, limitsOf, monthlyUse, PLAN_NAMES, PLANS, PREVIEWS_PER_DAY, smallestPlan, type Compiler, type Tier } from '../quota/plans.js';
import type { PreviewStore } from '../quota/previews.js';
import { ensureCatalog } from '../tex/diagnosis/catalog.js';
import { diagnose, missingCharacters, type Diagnosis, type LogAnalysis } from '../tex/diagnosis/index.js';
import type { TexWarning } from '../tex/warnings.js';
import { taggingFailureHint, taggingWarnings } from '../tex/output/tagging-status.js';
import type { ProbeCompile } from '../tex/diagnosis/probe.js';
import { ProbeRefused, WindowProbeBudget, type ProbeBudget } from './probe-budget.js';
import type { TexQueue } from '../queue/queue.js';
import type { TexJob, TexResult } from '../tex/job.js';
import { signedPageImageUrl, signedPdfUrl } from './links.js';
import { outputFailure, parseOutput } from './output.js';
import type { OutputSpec } from '../tex/output/spec.js';
import { XMPDATA_FILE } from '../tex/project/paths.js';
import type { PdfStore } from './pdfs.js';
import { resultKey, type ResultCache } from './result-cache.js';
import { checkRequest } from './rules.js';
import type { AccountUsage, AnonymousUsage, CompileContext, CompileInput, CompileSuccess } from './types.js';
import type { AssetResolver, ConversionMeter, ResolvedAssets } from '../assets/resolver.js';

/** Log text kept in a failure body: the end of the transcript, where the error is. */
export const LOG_CAP_BYTES = 64 * 1024;
/** Largest whole PDF compiled before a preview slice is cut: the largest plan's PDF limit. */
export const PREVIEW_PDF_CEILING = Math.max(...PLAN_NAMES.map((plan) => PLANS[plan].maxPdfBytes));
const PREVIEW_RETRY_SECONDS = 10;
const PREVIEW_UNAVAILABLE_RETRY_SECONDS = 60;
/**
 * A probe's wall clock: only a safety net. Its CPU time is what bounds it (the probe budget's
 * grant), so a loaded machine makes a probe slower, never a different verdict.
 */
const PROBE_WALL_MS = 20_000;
/** Less time than this left before the caller's deadline: no probe starts. */
const PROBE_MIN_WALL_MS = 1_000;

export interface CompileDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  counters: Counters;
  metrics: Metrics;
  texQueue: TexQueue;
  pdfs: PdfStore;
  assets: AssetResolver;
  previews: PreviewStore;
  /** Identical requests get the stored result without running TeX (see result-cache.ts). */
  results?: ResultCache;
  /** What diagnosis probes may run (see probe-budget.ts); by default one per node from the config. */
  probes?: ProbeBudget;
  /** The TeX Live years this server serves, newest (the default) first; none: the host's TeX Live. */
  texlive?: readonly string[];
}

/** Diagnosis probes get one TeX pass each: with the document's own passes (5 at most) and 3 probes, a failing request runs at most 8. */
const PROBE_PASSES = 1;

/** What the plan lets this compile do, decided before TeX runs. */
interface Plan {
  tier: Tier;
  /** Accounts with previews on get a truncated PDF instead of page_limit_exceeded. */
  previews: boolean;
  timeoutSeconds: number;
  maxFileBytes: number;
}

export function capLog(log: string): string {
  if (Buffer.byteLength(log) <= LOG_CAP_BYTES) return log;
  const tail = Buffer.from(log).subarray(-LOG_CAP_BYTES).toString('utf8').replace(/^\uFFFD+/, '');
  return `[log truncated: last ${LOG_CAP_BYTES} bytes]\n${tail}`;
}

export function studioUrl(baseUrl: string, latex: string, compiler: Compiler): string {
  const src = Buffer.from(deflateSync(strToU8(latex))).toString('base64url');
  return `${baseUrl}/studio#src=${src}&compiler=${compiler}`;
}

function previewInProgress(tier: Tier): ServiceError {
  return refused(
    { code: 'preview_in_progress', message: 'A size preview is already compiling for this account; previews run one at a time.', details: { plan: tier }, retryable: true },
    PREVIEW_RETRY_SECONDS,
  );
}

export class CompileService {
  private readonly quota: CompileQuota;
  private readonly fair: FairUse;
  private readonly probes: ProbeBudget;

  constructor(private readonly deps: CompileDeps) {
    this.quota = new CompileQuota(deps.counters, deps.clock, deps.config);
    this.fair = new FairUse(deps.counters, deps.clock, deps.config);
    this.probes = deps.probes ?? new WindowProbeBudget(deps.config.probes, deps.clock);
    // The TeX Live index behind package suggestions: read from its cache (or built) in the background.
    void ensureCatalog(deps.config.texIndexDir);
  }

  /**
   * Probe compiles that confirm a package suggestion (issue 19): sandboxed one-pass jobs, like
   * any compile, under the caller's probe budget, bounded by CPU time (and the caller's
   * deadline). None runs for a caller over its failure budget; their time counts as the
   * failed compile's (docs/fair-use.md).
   */
  private probeFor(caller: Caller, deadline: number | undefined, fair: FairTicket, background: boolean): ProbeCompile {
    const who = caller.kind === 'account' ? `account:${caller.account.id}` : `address:${caller.ip}`;
    return (source, compiler) => {
      const timeoutMs = Math.min(PROBE_WALL_MS, deadline !== undefined ? deadline - this.deps.clock.ms() : Infinity);
      if (timeoutMs < PROBE_MIN_WALL_MS || fair.overBudget) return Promise.reject(new ProbeRefused('caller'));
      return this.probes.run(who, async ({ cpuSeconds }) => {
        const result = await this.deps.texQueue.run({
          source,
          compiler,
          timeoutMs,
          cpuSeconds,
          maxFileBytes: 16 * 1024 * 1024,
          maxPasses: PROBE_PASSES,
          fairness: { caller: callerId(caller), background, yields: FAIR_USE[tierOf(caller)].yieldsCpu },
        });
        fair.spend(result.durationMs);
        return result;
      });
    };
  }

  /** The caller's fair-use limits and what it used of them (GET /api/v1/usage). */
  fairUse(caller: Caller): Promise<FairUseReport> {
    return this.fair.report(caller);
  }

  /** The asset resolver in use; the asset library replaces the default one. */
  get assets(): AssetResolver {
    return this.deps.assets;
  }
  set assets(resolver: AssetResolver) {
    this.deps.assets = resolver;
  }

  /** The size-preview budget store (replaceable, e.g. by a failing one in tests). */
  get previews(): PreviewStore {
    return this.deps.previews;
  }
  set previews(store: PreviewStore) {
    this.deps.previews = store;
  }

  async compile(caller: Caller, input: CompileInput, context: CompileContext = {}): Promise<CompileSuccess> {
    if (typeof input !== 'object' || input === null) {
      throw invalidField('body', 'type', 'must be object', { message: 'Request is invalid: body must be a JSON object' });
    }

    const texlive = this.texliveYear(input.texlive);
    try {
      return await this.compileWith(caller, input, context, texlive);
    } catch (err) {
      // Every 422 (a TeX failure, or input TeX would have run with) says which TeX Live.
      throw err instanceof ServiceError && err.status === 422 ? err.withDetails({ texlive }) : err;
    }
  }

  /** The TeX Live year of a request: one this server serves, or 422 texlive_not_available (nothing charged). */
  texliveYear(requested: unknown): string {
    const served = this.deps.texlive ?? [];
    if (requested === undefined || requested === null) return served[0] ?? 'host';
    if (typeof requested === 'string' && served.includes(requested)) return requested;
    throw errors.texlive_not_available(
      served.length > 0 ? `TeX Live ${String(requested)} is not installed here; this server has ${served.join(', ')}.` : 'This server runs its host\'s TeX Live (QUIRE_SANDBOX=off) and takes no texlive year.',
      { texlive: requested, available: [...served] },
    );
  }

  private async compileWith(caller: Caller, input: CompileInput, context: CompileContext, texlive: string): Promise<CompileSuccess> {
    const { config } = this.deps;
    const tier = tierOf(caller);
    const upgradeUrl = links(config).upgradeUrl;
    const previews = caller.kind === 'account' && config.previews;
    const request = { ...checkRequest(input, tier, upgradeUrl, previews), texlive };
    // Fair use before quota: a caller over its failure budget or its compiles in flight is refused
    // at once, before its first SVG or EPS conversion (a sandbox run like TeX) or else before TeX.
    // SPEC's preview_in_progress where the compile in flight is the account's size preview.
    const admit = () => this.fair.admit(caller).catch((err: unknown) => this.previewBusy(err, caller, request.sizePreview));
    let converting: FairTicket | undefined;
    const meter: ConversionMeter = {
      begin: async () => void (converting ??= await admit()),
      spent: (ms) => converting?.spend(ms),
    };
    let assets: ResolvedAssets;
    let output: OutputSpec | undefined;
    try {
      assets = await this.deps.assets.forCompile(caller, { assets: input.assets, use_stored_assets: input.use_stored_assets, binary: request.binary }, meter);
      const used = { count: assets.ephemeral.length + assets.stored.length, bytes: assets.files.reduce((sum, file) => sum + file.data.length, 0) };
      output = parseOutput(input.output, tier, request.latex, used, upgradeUrl, assets.files, request.compiler);
    } catch (err) {
      // A conversion that failed (or a refusal after one): its time is failure time, the slot goes back.
      await converting?.finish(false);
      throw err;
    }
    const fair = converting ?? (await admit());
    let delivered = false;
    try {
      const preview = request.sizePreview && caller.kind === 'account' ? await this.beginSizePreview(caller.account.id, tier, request.bytes) : null;
      try {
        const ticket = await this.quota.reserve(caller);
        context.onAccepted?.();
        try {
          const body = await this.run(caller, { ...request, output }, assets, context, ticket, this.planFor(tier, previews, request.bytes), fair);
          delivered = true;
          return body;
        } catch (err) {
          await ticket.release();
          throw await this.withUsage(err, caller);
        }
      } finally {
        await preview?.finish(delivered);
      }
    } finally {
      await fair.finish(delivered);
    }
  }

  /** A 422 CompileFailure carries the caller's usage (SPEC §2.3), read after the slot went back. */
  private async withUsage(err: unknown, caller: Caller): Promise<unknown> {
    if (!(err instanceof ServiceError) || err.status !== 422) return err;
    let usage;
    try {
      usage = await this.usage(caller);
    } catch (lookup) {
      this.deps.log.warn({ err: lookup }, 'usage unavailable for a compile failure body');
      return err;
    }
    return err.withDetails({ usage });
  }

  /** A size preview compiles under the smallest plan that takes the source; pages and PDF stay the caller's. */
  private planFor(tier: Tier, previews: boolean, bytes: number): Plan {
    const limits = limitsOf(tier);
    const sourcePlan = bytes > limits.maxLatexBytes ? smallestPlan((l) => l.maxLatexBytes >= bytes) : null;
    const timeoutSeconds = Math.max(limits.compileTimeoutSeconds, sourcePlan ? limitsOf(sourcePlan).compileTimeoutSeconds : 0);
    return { tier, previews, timeoutSeconds, maxFileBytes: previews ? PREVIEW_PDF_CEILING : limits.maxPdfBytes };
  }

  /**
   * SPEC §4.1 names the refusal of a size preview while another compiles: when the one compile
   * in flight that fair use counted is itself a size preview, the answer is preview_in_progress.
   */
  private async previewBusy(err: unknown, caller: Caller, sizePreview: boolean): Promise<never> {
    if (!sizePreview || caller.kind !== 'account' || !(err instanceof ServiceError) || err.code !== 'too_many_concurrent_compiles') throw err;
    // A store that cannot answer leaves fair use's own refusal.
    if (await this.deps.previews.inProgress(caller.account.id).catch(() => false)) throw previewInProgress(tierOf(caller));
    throw err;
  }

  private async beginSizePreview(accountId: number, tier: Tier, bytes: number) {
    const limits = limitsOf(tier);
    const upgradeUrl = links(this.deps.config).upgradeUrl;
    let start;
    try {
      start = await this.deps.previews.begin(accountId, this.deps.clock.now());
    } catch (err) {
      this.deps.log.error({ err }, 'preview store unavailable');
      throw refused(
        {
          code: 'preview_unavailable',
          message: `The source is over the ${limits.maxLatexBytes}-byte limit of the ${tier} plan and previews are unavailable right now; retry in a minute or shorten the source.`,
          details: { plan: tier, limit: limits.maxLatexBytes },
          retryable: true,
        },
        PREVIEW_UNAVAILABLE_RETRY_SECONDS,
      );
    }
    if (start.ok) return start;
    if (start.reason === 'in_progress') throw previewInProgress(tier);
    throw errors.latex_too_large(`The source is ${bytes} bytes, over the ${limits.maxLatexBytes}-byte limit of the ${tier} plan, and today's ${PREVIEWS_PER_DAY} size previews are used up.`,
      {
        limit: limits.maxLatexBytes,
        size_bytes: bytes,
        plan: tier,
        plan_required: smallestPlan((l) => l.maxLatexBytes >= bytes),
        preview_attempts_per_day: PREVIEWS_PER_DAY,
        preview_attempts_remaining_today: 0,
        upgrade_url: upgradeUrl,
        retryable: false,
      },
    );
  }

  private async run(
    caller: Caller,
    request: ReturnType<typeof checkRequest> & { output: OutputSpec | undefined; texlive: string },
    assets: Awaited<ReturnType<AssetResolver['forCompile']>>,
    context: CompileContext,
    ticket: Ticket,
    plan: Plan,
    fair: FairTicket,
  ): Promise<CompileSuccess> {
    const { config, clock } = this.deps;
    const { tier } = plan;
    const limits = limitsOf(tier);
    const upgradeUrl = links(config).upgradeUrl;
    const timeoutMs = Math.min(
      plan.timeoutSeconds * 1000,
      context.deadline !== undefined ? Math.max(0, context.deadline - clock.ms()) : Infinity,
    );
    const files = [...assets.files, ...request.files];
    checkNoCollision(files, request.output);
    const scope = cacheScope(caller, context, assets);
    // Nobody waits on an async job or a batch item: the queue serves them after interactive compiles.
    const background = context.background === true || context.onAccepted !== undefined;
    const job = {
      source: request.latex,
      compiler: request.compiler,
      ...(request.texlive !== 'host' ? { texlive: request.texlive } : {}),
      files,
      timeoutMs,
      maxFileBytes: plan.maxFileBytes,
      ...(plan.previews ? { keepPages: limits.maxPages } : {}),
      // The preamble cache's pool: the caller's own, or the gallery's shared one (see cacheScope).
      preamble: { scope: scope === 'public' ? 'gallery' : scope, day: clock.now().toISOString().slice(0, 10) },
      fairness: { caller: callerId(caller), background, yields: FAIR_USE[tierOf(caller)].yieldsCpu },
      ...(request.output ? { output: request.output } : {}),
    };
    const queued = performance.now();
    const result = await this.recovering(request.onError, (run) => this.cachedRun(caller, run, plan, context, assets), job);
    fair.spend(result.durationMs);
    // What the job did not spend running is time in the queue (and on the way to a worker).
    const queueMs = Math.max(0, performance.now() - queued - result.durationMs);
    this.deps.metrics.compiles.inc({ engine: request.compiler, outcome: result.outcome });
    this.deps.metrics.compileDuration.observe({ engine: request.compiler }, result.durationMs / 1000);
    this.deps.log.info(
      { via: context.via ?? 'compile', tier, engine: request.compiler, outcome: result.outcome, passes: result.passes, cached: result.passes === 0, ms: result.durationMs, bytes: request.bytes },
      'compile',
    );
    const { pdf, pages, totalPages, warnings } = await this.accept(result, plan, request, upgradeUrl, this.probeFor(caller, context.deadline, fair, background));
    if (context.deadline !== undefined && clock.ms() > context.deadline) {
      // The caller (a render past its wall clock) has already been answered: keep nothing, charge nothing.
      throw errors.compilation_timeout('The compile finished after the caller\'s deadline.', { plan: tier, retryable: true });
    }

    const jobId = randomUUID();
    const expiresAt = new Date(clock.now().getTime() + limits.pdfLinkSeconds * 1000);
    const storing = performance.now();
    await this.deps.pdfs.save({
      id: jobId,
      accountId: caller.kind === 'account' ? caller.account.id : null,
      data: pdf,
      pages,
      expiresAt,
    });
    await this.deps.pdfs.saveImages(jobId, result.pageImages ?? []);
    if (result.passes > 0) this.deps.metrics.observeStages({ queue: queueMs, ...result.stages, store: performance.now() - storing });
    await ticket.commit();

    const body: CompileSuccess = {
      job_id: jobId,
      pdf_url: signedPdfUrl(config.baseUrl, config.secret, jobId, expiresAt),
      expires_at: expiresAt.toISOString(),
      pages,
      compilation_time_ms: result.durationMs,
      compiler: request.compiler,
      texlive: request.texlive,
      // Assets the caller named; `files` may also hold derived files (an SVG's converted PDF).
      assets_count: assets.ephemeral.length + assets.stored.length,
      ephemeral_assets_used: assets.ephemeral,
      stored_assets_used: assets.stored,
      usage: await this.usage(caller),
      warnings,
      ...(request.onError === 'continue' ? { errors: result.errors ?? [] } : {}),
      ...(result.pageImages
        ? { page_images: result.pageImages.map(({ page, width, height }) => ({ page, width, height, url: signedPageImageUrl(config.baseUrl, config.secret, jobId, page, expiresAt) })) }
        : {}),
      ...(result.conformance ? { conformance: result.conformance } : {}),
    };
    if (caller.kind === 'anonymous') return this.anonymousExtras(body);
    const extended = this.accountExtras(body, ticket, tier, request.latex, request.compiler);
    return request.sizePreview || totalPages > pages ? this.previewExtras(extended, tier, request.bytes, totalPages) : extended;
  }

  /**
   * With on_error "continue", a job TeX failed on runs again going on past errors, cold (the
   * warm engines, formats and paused preambles halt on errors, so the first run keeps them for
   * every document that compiles). A PDF from that run is the result; without one the first
   * run's transcript gives SPEC's diagnosis.
   */
  private async recovering(onError: 'stop' | 'continue', run: (job: TexJob) => Promise<TexResult>, job: TexJob): Promise<TexResult> {
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
  private async cachedRun(
    caller: Caller,
    job: Parameters<TexQueue['run']>[0],
    plan: Plan,
    context: CompileContext,
    assets: Awaited<ReturnType<AssetResolver['forCompile']>>,
  ): Promise<TexResult> {
    const cache = this.deps.results;
    if (!cache) return this.deps.texQueue.run(job);
    const key = resultKey({
      scope: cacheScope(caller, context, assets),
      ...(job.texlive !== undefined ? { texlive: job.texlive } : {}),
      compiler: job.compiler,
      source: job.source,
      files: job.files ?? [],
      timeoutMs: plan.timeoutSeconds * 1000,
      maxFileBytes: job.maxFileBytes,
      keepPages: job.keepPages,
      ...(job.continueOnError ? { continueOnError: true } : {}),
      // Passwords enter only this hash, never a stored or logged value.
      ...(job.output ? { output: JSON.stringify(job.output, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)) } : {}),
      day: this.deps.clock.now().toISOString().slice(0, 10),
    });
    const started = this.deps.clock.ms();
    const hit = cache.get(key);
    if (hit) {
      return { ...hit, passes: 0, durationMs: Math.round(this.deps.clock.ms() - started) };
    }
    const result = await this.deps.texQueue.run(job);
    cache.set(key, result);
    return result;
  }

  private previewExtras(body: CompileSuccess, tier: Tier, bytes: number, totalPages: number): CompileSuccess {
    const limits = limitsOf(tier);
    const truncated = totalPages > body.pages;
    const planRequired = smallestPlan((l) => l.maxPages >= totalPages && l.maxLatexBytes >= bytes);
    const reasons = [
      ...(bytes > limits.maxLatexBytes ? [`the source is ${bytes} bytes (limit ${limits.maxLatexBytes})`] : []),
      ...(truncated ? [`the document has ${totalPages} pages (limit ${limits.maxPages}); this PDF holds the first ${body.pages}`] : []),
    ];
    const upgrade = planRequired ? `The ${planRequired} plan covers the whole document.` : 'No plan covers the whole document; shorten it.';
    const warning = `Preview only: ${reasons.join(' and ')} on the ${tier} plan. ${upgrade}`;
    return {
      ...body,
      preview: true,
      truncated,
      total_pages: totalPages,
      plan_required: planRequired,
      warning: body.warning ? `${body.warning} ${warning}` : warning,
      upgrade_url: links(this.deps.config).upgradeUrl,
    };
  }

  /** The PDF and its page count, or the 422 that explains why there is none. */
  private async accept(result: TexResult, plan: Plan, request: { latex: string; compiler: Compiler; output?: OutputSpec | undefined }, upgradeUrl: string, probe: ProbeCompile) {
    const { tier, timeoutSeconds } = plan;
    const { compiler, latex: source } = request;
    const limits = limitsOf(tier);
    if (result.outcome === 'timeout') {
      throw errors.compilation_timeout(`Compilation did not finish within ${timeoutSeconds} seconds and was stopped.`, {
        timeout_seconds: timeoutSeconds,
        plan: tier,
        retryable: false,
        log: capLog(result.log),
        agent_hint: 'The document took too long: look for loops or very heavy content (large TikZ pictures, huge tables), simplify it and compile again.',
        ...(tier !== 'anonymous' ? { upgrade_url: upgradeUrl } : {}),
      });
    }
    if (result.outcome === 'file_too_large' && result.file === 'main.pdf') {
      throw this.pdfTooLarge(tier, upgradeUrl, plan.maxFileBytes > limits.maxPdfBytes ? plan.maxFileBytes : undefined);
    }
    if (result.outcome === 'file_too_large') {
      throw errors.compilation_failed(`The document wrote a file (${result.file ?? 'unknown'}) larger than this plan allows; it was stopped.`, {
        log: capLog(result.log),
        retryable: false,
        plan: tier,
        agent_hint: 'Remove the code that writes large files (\\write or \\openout loops) and compile again.',
      });
    }
    if (result.outcome === 'refused') {
      throw errors.compilation_failed(`The job's output was refused: ${result.problem ?? 'it is not a plain file'}.`, {
        log: capLog(result.log),
        retryable: false,
        plan: tier,
        agent_hint: 'The document tampered with its own output files (links, pipes, directories or renames in the job folder). Remove that code and compile again.',
      });
    }
    if (result.outcome === 'active_content') {
      throw errors.pdf_active_content(`The PDF carries active content and was not delivered: ${result.problem ?? 'script or launch actions'}.`, {
        found: result.problem ?? '',
        retryable: false,
        plan: tier,
        agent_hint: 'Remove JavaScript, Launch actions and javascript: links (\\href{javascript:...}, \\pdfannot, \\special{pdf:...}) from the document and compile again.',
      });
    }
    if (result.outcome === 'standard_failed' || result.outcome === 'output_failed') throw outputFailure(result, tier, request.output, capLog(result.log));
    if (result.outcome === 'unmeasurable') {
      throw errors.pdf_size_unknown('The PDF was produced but its size and pages could not be measured; retry the same request.', {
        plan: tier,
        retryable: true,
        agent_hint: 'Send the same request again; nothing was charged.',
      });
    }
    if (result.outcome !== 'ok' || !result.pdf || result.pages === undefined) {
      // A package suggestion the index is unsure of is checked by probe compiles (the caller's probe budget).
      const analysis = await diagnose(result.log, compiler, { source, probe });
      const blocked = request.output?.tagging ? taggingFailureHint(result.log) : null;
      throw compilationFailed(blocked ? { ...analysis, agent_hint: `${blocked} ${analysis.agent_hint ?? ''}`.trim() } : analysis, result.log, tier);
    }
    // xelatex and lualatex leave out glyphs their font lacks, warn, and still write a PDF:
    // a warning here too (as latexmk delivers it), naming the codepoint and a font that has it.
    // pdflatex's missing characters are empty slots of 8-bit fonts (warnings.ts).
    const glyphs = compiler === 'pdflatex' ? undefined : missingCharacters(result.log, compiler, { source });
    // Tagged (issue 40): packages the kernel's tagging-status data says block tagging.
    const tagging = request.output?.tagging ? taggingWarnings(result.log) : [];
    const warnings = [...(result.warnings ?? []), ...(glyphs ? [glyphWarning(glyphs)] : []), ...tagging];
    if (result.pdf.length > limits.maxPdfBytes) throw this.pdfTooLarge(tier, upgradeUrl);
    if (result.pages > limits.maxPages) {
      // Previews off, or the slice could not be cut.
      throw errors.page_limit_exceeded(`The PDF has ${result.pages} pages; the limit here is ${limits.maxPages}.`, {
        pages: result.pages,
        limit: limits.maxPages,
        plan: tier,
        plan_required: smallestPlan((l) => l.maxPages >= result.pages!),
        upgrade_url: upgradeUrl,
        retryable: false,
      });
    }
    return { pdf: result.pdf, pages: result.pages, totalPages: result.totalPages ?? result.pages, warnings };
  }

  /** With `ceiling`: the whole document passed the compile ceiling before a preview could be cut. */
  private pdfTooLarge(tier: Tier, upgradeUrl: string, ceiling?: number): ServiceError {
    const planLimit = limitsOf(tier).maxPdfBytes;
    const limit = ceiling ?? planLimit;
    return errors.pdf_too_large(`The PDF is larger than the ${limit} bytes allowed here.`, {
      limit,
      ...(ceiling !== undefined ? { plan_limit: planLimit } : {}),
      plan: tier,
      upgrade_url: upgradeUrl,
      retryable: false,
    });
  }

  private async usage(caller: Caller): Promise<AccountUsage | AnonymousUsage> {
    const now = this.deps.clock.now();
    if (caller.kind === 'anonymous') {
      const limit = limitsOf('anonymous').compilesPerPeriod;
      const { used } = await this.deps.counters.get(anonymousDailyKey(caller.ip, now));
      return { daily_limit: limit, used_today: used, remaining_today: Math.max(0, limit - used), resets_at: nextDayStart(now).toISOString() };
    }
    const { plan, id } = caller.account;
    const { used } = await this.deps.counters.get(monthlyCompilesKey(id, now));
    const { used_this_month, grace_used } = monthlyUse(plan, used);
    const monthly_limit = limitsOf(plan).compilesPerPeriod;
    return { plan, monthly_limit, used_this_month, compilations_this_month: used_this_month, grace_used, resets_at: nextMonthStart(now).toISOString() };
  }

  private anonymousExtras(body: CompileSuccess): CompileSuccess {
    const remaining = (body.usage as AnonymousUsage).remaining_today;
    return {
      ...body,
      anonymous: true,
      remaining_today: remaining,
      note: `Compiled on the keyless tier: ${remaining} compilation(s) left today, ${anonymousTierPhrase()}, links valid for ${anonymousLinkPhrase()}. ${freeKeyPhrase()}`,
      next_step: obtainKeyStep(this.deps.config),
      upgrade_url: openSignupUrl(this.deps.config) ?? links(this.deps.config).upgradeUrl,
    };
  }

  private accountExtras(body: CompileSuccess, ticket: Ticket, tier: Tier, latex: string, compiler: Compiler): CompileSuccess {
    const extended: CompileSuccess = { ...body, studio_url: studioUrl(this.deps.config.baseUrl, latex, compiler) };
    if (!ticket.grace) return extended;
    const limit = limitsOf(tier).compilesPerPeriod;
    return {
      ...extended,
      quota_grace: true,
      grace_remaining: ticket.grace.remaining,
      warning: `This account has used its ${limit} compilations this month; this compile used the grace buffer (${ticket.grace.remaining} of ${graceAllowance(tier, this.deps.config.graceFraction)} left) and was not charged. Tell the user to upgrade before the buffer runs out.`,
      upgrade_url: links(this.deps.config).upgradeUrl,
    };
  }
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

/** Whose cached results and preamble formats a job may use: the caller's, or the public gallery's when nothing of the caller is in it. */
function cacheScope(caller: Caller, context: CompileContext, assets: Awaited<ReturnType<AssetResolver['forCompile']>>): string {
  const own = caller.kind === 'account' ? `account:${caller.account.id}` : `anonymous:${caller.ip}`;
  const shared = context.via === 'public_render' && assets.stored.length === 0 && assets.ephemeral.length === 0;
  return shared ? 'public' : own;
}

/** The missing_glyph warning of xelatex/lualatex: the diagnosis's summary, fix, codepoint and line. */
function glyphWarning(found: Diagnosis): TexWarning {
  return { type: 'missing_glyph', message: found.summary, ...(found.line !== undefined ? { line: found.line } : {}), fix: found.suggested_fix, ...(found.symbol ? { symbol: found.symbol } : {}) };
}

function compilationFailed(analysis: LogAnalysis, log: string, tier: Tier): ServiceError {
  return errors.compilation_failed(analysis.message ? `LaTeX error: ${analysis.message}` : 'Compilation failed; see the log.', {
    log: capLog(log),
    ...(analysis.line !== undefined ? { line: analysis.line } : {}),
    retryable: analysis.diagnosis?.retryable ?? true,
    ...(analysis.diagnosis ? { diagnosis: analysis.diagnosis } : {}),
    agent_hint: analysis.agent_hint,
    plan: tier,
  });
}
