// A compile request read from the wire once, top to bottom, into one checked value that the
// rest of the pipeline (admission, run, answer) only reads: the TeX Live year, the request
// rules (project zip, project files, size, LaTeX-ness, compiler: rules.ts), then the assets
// (inline, binary project files, stored: the asset resolver, which may convert SVG and EPS)
// and the output options (output.ts), and the plan the compile runs under. Only this module
// reads the request's fields; each step refuses with the catalogue code SPEC names, in this
// order, before anything is reserved.
import { tierOf, type Caller } from '../accounts/caller.js';
import { errors, invalidField, ServiceError } from '../errors.js';
import { limitsOf, PLAN_NAMES, PLANS, smallestPlan, type Compiler, type Tier } from '../quota/plans.js';
import type { OutputSpec } from '../tex/output/spec.js';
import type { AssetResolver, ConversionMeter, ResolvedAssets } from '../assets/resolver.js';
import { parseOutput } from './output.js';
import type { SigningService, SignStep } from '../signing/service.js';
import { checkRequest, type CompileRequest, type OnError } from './rules.js';

/** Largest whole PDF compiled before a preview slice is cut: the largest plan's PDF limit. */
export const PREVIEW_PDF_CEILING = Math.max(...PLAN_NAMES.map((plan) => PLANS[plan].maxPdfBytes));

/** What the plan lets this compile do, decided before TeX runs. */
export interface Plan {
  readonly tier: Tier;
  /** Accounts with previews on get a truncated PDF instead of page_limit_exceeded. */
  readonly previews: boolean;
  readonly timeoutSeconds: number;
  readonly maxFileBytes: number;
}

/** The request after its rules: what needs no I/O is checked; assets and output wait for the resolver. */
export interface RuledRequest {
  readonly caller: Caller;
  readonly texlive: string;
  readonly latex: string;
  readonly compiler: Compiler;
  /** main.tex and the project's text files together. */
  readonly bytes: number;
  /** The project's other text files, for the job's workspace. */
  readonly files: CompileRequest['files'];
  /** Over the plan's source limit but within the hard cap: compile as a size preview. */
  readonly sizePreview: boolean;
  readonly onError: OnError;
  readonly plan: Plan;
  /** The fields the next step reads, as sent: nothing after this module looks at the wire. */
  readonly pending: { assets: unknown; use_stored_assets: unknown; binary: CompileRequest['binary']; output: unknown };
}

/** A compile request every rule has passed: what admission, the run and the answer read. */
export interface CheckedRequest extends Omit<RuledRequest, 'pending'> {
  /** The job's asset files (converted SVG and EPS with graphics.cfg), and the names the caller sent. */
  readonly assets: ResolvedAssets;
  /** The output step, or none. */
  readonly output: OutputSpec | undefined;
  /** output.sign, run on the final PDF in this process (src/signing/), or none. */
  readonly sign?: SignStep;
}

/** What reading a request needs of the server. */
export interface RequestEnv {
  /** The TeX Live years this server serves, newest (the default) first; none: the host's TeX Live. */
  texlive: readonly string[];
  /** QUIRE_PREVIEWS: accounts get previews instead of page and size refusals. */
  previews: boolean;
  upgradeUrl: string;
}

/** The TeX Live year of a request: one this server serves, or 422 texlive_not_available (nothing charged). */
export function texliveYear(served: readonly string[], requested: unknown): string {
  if (requested === undefined || requested === null) return served[0] ?? 'host';
  if (typeof requested === 'string' && served.includes(requested)) return requested;
  throw errors.texlive_not_available(
    served.length > 0 ? `TeX Live ${String(requested)} is not installed here; this server has ${served.join(', ')}.` : 'This server runs its host\'s TeX Live (QUIRE_SANDBOX=off) and takes no texlive year.',
    { texlive: requested, available: [...served] },
  );
}

/** Every 422 (a TeX failure, or input TeX would have run with) says which TeX Live. */
export function withTexlive(err: unknown, texlive: string): unknown {
  return err instanceof ServiceError && err.status === 422 ? err.withDetails({ texlive }) : err;
}

/**
 * The first step, without I/O: the body's shape, the TeX Live year, then the request rules.
 * A refusal after the year is known carries it (withTexlive).
 */
export function readRequest(caller: Caller, input: unknown, env: RequestEnv): RuledRequest {
  if (typeof input !== 'object' || input === null) {
    throw invalidField('body', 'type', 'must be object', { message: 'Request is invalid: body must be a JSON object' });
  }
  const fields = input as Record<string, unknown>;
  const texlive = texliveYear(env.texlive, fields.texlive);
  try {
    const tier = tierOf(caller);
    const previews = caller.kind === 'account' && env.previews;
    const rules = checkRequest(fields, tier, env.upgradeUrl, previews);
    return {
      caller,
      texlive,
      latex: rules.latex,
      compiler: rules.compiler,
      bytes: rules.bytes,
      files: rules.files,
      sizePreview: rules.sizePreview,
      onError: rules.onError,
      plan: planFor(tier, previews, rules.bytes),
      pending: { assets: fields.assets, use_stored_assets: fields.use_stored_assets, binary: rules.binary, output: fields.output },
    };
  } catch (err) {
    throw withTexlive(err, texlive);
  }
}

/**
 * The second step: the assets (validated, counted against the plan, SVG and EPS converted
 * under `meter`), then the output options, which may name an asset and count with them.
 */
export async function resolveRequest(
  ruled: RuledRequest,
  resolver: AssetResolver,
  meter: ConversionMeter,
  upgradeUrl: string,
  signing: Pick<SigningService, 'prepare'>,
): Promise<CheckedRequest> {
  const { pending, ...request } = ruled;
  const assets = await resolver.forCompile(request.caller, { assets: pending.assets, use_stored_assets: pending.use_stored_assets, binary: pending.binary }, meter);
  const used = { count: assets.ephemeral.length + assets.stored.length, bytes: assets.files.reduce((sum, file) => sum + file.data.length, 0) };
  const output = parseOutput(pending.output, request.plan.tier, request.latex, used, upgradeUrl, assets.files, request.compiler);
  // output.sign (the identity opened, its password checked) before the quota: a bad one costs nothing.
  const sign = await signing.prepare(request.caller, pending.output);
  return { ...request, assets, output, ...(sign ? { sign } : {}) };
}

/** A size preview compiles under the smallest plan that takes the source; pages and PDF stay the caller's. */
function planFor(tier: Tier, previews: boolean, bytes: number): Plan {
  const limits = limitsOf(tier);
  const sourcePlan = bytes > limits.maxLatexBytes ? smallestPlan((l) => l.maxLatexBytes >= bytes) : null;
  const timeoutSeconds = Math.max(limits.compileTimeoutSeconds, sourcePlan ? limitsOf(sourcePlan).compileTimeoutSeconds : 0);
  return { tier, previews, timeoutSeconds, maxFileBytes: previews ? PREVIEW_PDF_CEILING : limits.maxPdfBytes };
}
