// The answer to a compile TeX ran: a result the plan does not take is the 422 (or 413) that
// explains it, with SPEC's diagnosis of a failed run; a delivered PDF is stored, the compile
// charged, and the 200 body built with a signed link, the caller's usage and the notes its
// tier gets (the keyless tier's next step, an account's grace buffer, a preview's plan).
import { randomUUID } from 'node:crypto';
import { deflateSync, strToU8 } from 'fflate';
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, type ServiceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { obtainKeyStep, type Ticket } from '../quota/compile-quota.js';
import type { Counters } from '../quota/counters.js';
import { graceAllowance, limitsOf, smallestPlan, type Compiler, type Tier } from '../quota/plans.js';
import { anonymousLinkPhrase, anonymousTierPhrase, freeKeyPhrase } from '../quota/prose.js';
import { diagnose, missingCharacters, type Diagnosis, type LogAnalysis } from '../tex/diagnosis/index.js';
import type { ProbeCompile } from '../tex/diagnosis/probe.js';
import type { TexResult } from '../tex/job.js';
import type { TexWarning } from '../tex/warnings.js';
import { taggingFailureHint, taggingWarnings } from '../tex/output/tagging-status.js';
import { signedPageImageUrl, signedPdfUrl } from './links.js';
import { outputFailure } from './output.js';
import type { PdfStore } from './pdfs.js';
import type { CheckedRequest } from './request.js';
import type { AnonymousUsage, CompileSuccess } from './types.js';
import { usageOf } from './usage.js';

/** Log text kept in a failure body: the end of the transcript, where the error is. */
export const LOG_CAP_BYTES = 64 * 1024;

export function capLog(log: string): string {
  if (Buffer.byteLength(log) <= LOG_CAP_BYTES) return log;
  const tail = Buffer.from(log).subarray(-LOG_CAP_BYTES).toString('utf8').replace(/^\uFFFD+/, '');
  return `[log truncated: last ${LOG_CAP_BYTES} bytes]\n${tail}`;
}

export function studioUrl(baseUrl: string, latex: string, compiler: Compiler): string {
  const src = Buffer.from(deflateSync(strToU8(latex))).toString('base64url');
  return `${baseUrl}/studio#src=${src}&compiler=${compiler}`;
}

/** A PDF the plan takes: what the answer stores and describes. */
export interface Accepted {
  pdf: Buffer;
  pages: number;
  totalPages: number;
  warnings: TexWarning[];
}

export interface AnswerDeps {
  config: Config;
  clock: Clock;
  counters: Counters;
  metrics: Metrics;
  pdfs: PdfStore;
  upgradeUrl: string;
  /** The keyless tier's way up: the open sign-up page, else the pricing page. */
  anonymousUpgradeUrl: string;
}

export class Answer {
  constructor(private readonly deps: AnswerDeps) {}

  /** The PDF and its page count, or the 422 that explains why there is none. */
  async accept(request: CheckedRequest, result: TexResult, probe: ProbeCompile): Promise<Accepted> {
    const { upgradeUrl } = this.deps;
    const { plan, compiler, latex: source } = request;
    const { tier, timeoutSeconds } = plan;
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
      throw this.pdfTooLarge(tier, plan.maxFileBytes > limits.maxPdfBytes ? plan.maxFileBytes : undefined);
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
      // With the project's text files: an error in an \input file is diagnosed there, and the project's classes are known.
      const analysis = await diagnose(result.log, compiler, { source, probe, files: request.files });
      // Tagged (issue 40): the packages that block tagging come first in the hint.
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
    if (result.pdf.length > limits.maxPdfBytes) throw this.pdfTooLarge(tier);
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

  /**
   * Stores the accepted PDF (and its page images), charges the compile and builds the 200
   * body. `queueMs`: the time the job waited, for the stage metrics of a job TeX ran.
   */
  async deliver(request: CheckedRequest, result: TexResult, accepted: Accepted, quota: Ticket, queueMs: number): Promise<CompileSuccess> {
    const { config, clock, pdfs, metrics } = this.deps;
    const { caller } = request;
    const { pdf, pages, totalPages, warnings } = accepted;
    const jobId = randomUUID();
    const expiresAt = new Date(clock.now().getTime() + limitsOf(request.plan.tier).pdfLinkSeconds * 1000);
    const storing = performance.now();
    await pdfs.save({ id: jobId, accountId: caller.kind === 'account' ? caller.account.id : null, data: pdf, pages, expiresAt });
    await pdfs.saveImages(jobId, result.pageImages ?? []);
    if (result.passes > 0) metrics.observeStages({ queue: queueMs, ...result.stages, store: performance.now() - storing });
    await quota.commit();

    const body: CompileSuccess = {
      job_id: jobId,
      pdf_url: signedPdfUrl(config.baseUrl, config.secret, jobId, expiresAt),
      expires_at: expiresAt.toISOString(),
      pages,
      compilation_time_ms: result.durationMs,
      compiler: request.compiler,
      texlive: request.texlive,
      // Assets the caller named; `files` may also hold derived files (an SVG's converted PDF).
      assets_count: request.assets.ephemeral.length + request.assets.stored.length,
      ephemeral_assets_used: request.assets.ephemeral,
      stored_assets_used: request.assets.stored,
      usage: await usageOf(this.deps, caller),
      warnings,
      ...(request.onError === 'continue' ? { errors: result.errors ?? [] } : {}),
      ...(result.pageImages
        ? { page_images: result.pageImages.map(({ page, width, height }) => ({ page, width, height, url: signedPageImageUrl(config.baseUrl, config.secret, jobId, page, expiresAt) })) }
        : {}),
      ...(result.conformance ? { conformance: result.conformance } : {}),
    };
    if (caller.kind === 'anonymous') return this.anonymousExtras(body);
    const extended = this.accountExtras(body, caller, quota, request);
    return request.sizePreview || totalPages > pages ? this.previewExtras(extended, request, totalPages) : extended;
  }

  /** With `ceiling`: the whole document passed the compile ceiling before a preview could be cut. */
  private pdfTooLarge(tier: Tier, ceiling?: number): ServiceError {
    const planLimit = limitsOf(tier).maxPdfBytes;
    const limit = ceiling ?? planLimit;
    return errors.pdf_too_large(`The PDF is larger than the ${limit} bytes allowed here.`, {
      limit,
      ...(ceiling !== undefined ? { plan_limit: planLimit } : {}),
      plan: tier,
      upgrade_url: this.deps.upgradeUrl,
      retryable: false,
    });
  }

  private anonymousExtras(body: CompileSuccess): CompileSuccess {
    const remaining = (body.usage as AnonymousUsage).remaining_today;
    return {
      ...body,
      anonymous: true,
      remaining_today: remaining,
      note: `Compiled on the keyless tier: ${remaining} compilation(s) left today, ${anonymousTierPhrase()}, links valid for ${anonymousLinkPhrase()}. ${freeKeyPhrase()}`,
      next_step: obtainKeyStep(this.deps.config),
      upgrade_url: this.deps.anonymousUpgradeUrl,
    };
  }

  private accountExtras(body: CompileSuccess, caller: Caller, quota: Ticket, request: CheckedRequest): CompileSuccess {
    const tier = request.plan.tier;
    const extended: CompileSuccess = { ...body, studio_url: studioUrl(this.deps.config.baseUrl, request.latex, request.compiler) };
    if (!quota.grace) return extended;
    const limit = limitsOf(tier).compilesPerPeriod;
    return {
      ...extended,
      quota_grace: true,
      grace_remaining: quota.grace.remaining,
      warning: `This account has used its ${limit} compilations this month; this compile used the grace buffer (${quota.grace.remaining} of ${graceAllowance(tier, this.deps.config.graceFraction)} left) and was not charged. Tell the user to upgrade before the buffer runs out.`,
      upgrade_url: this.deps.upgradeUrl,
    };
  }

  private previewExtras(body: CompileSuccess, request: CheckedRequest, totalPages: number): CompileSuccess {
    const { tier } = request.plan;
    const { bytes } = request;
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
      upgrade_url: this.deps.upgradeUrl,
    };
  }
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
