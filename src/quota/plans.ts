// The plan table: every limit of SPEC §8 in one place. Every check in the code reads it.
import { COMPILERS, type Compiler } from '../tex/compilers.js';
import { GRAPHICS_EXTENSIONS } from '../tex/project/graphics.js';

export { COMPILERS, isCompiler, type Compiler } from '../tex/compilers.js';

export type PlanName = 'free' | 'starter' | 'pro' | 'business';
export type Tier = PlanName | 'anonymous';
export const PLAN_NAMES: readonly PlanName[] = ['free', 'starter', 'pro', 'business'];

const KB = 1024;
const MB = 1024 * 1024;
const GB = 1024 * MB;

export interface Limits {
  /** Compilations per month (accounts) or per UTC day (anonymous). */
  compilesPerPeriod: number;
  period: 'month' | 'day';
  /** Saved templates; null = unlimited. */
  templates: number | null;
  /** Kept versions per template: saving past it prunes the oldest (never the latest). */
  templateVersions: number;
  maxPages: number;
  maxLatexBytes: number;
  maxPdfBytes: number;
  maxAssetsPerDocument: number;
  maxAssetsBytesPerDocument: number;
  /** Extension of SPEC 1.5.0 (issue 23): page images per compile, as pages × dpi (one 72-dpi page = 72). */
  pageImageBudget: number;
  compileTimeoutSeconds: number;
  compilers: readonly Compiler[];
  /** Stored asset library; null = unlimited. */
  maxStoredAssets: number | null;
  maxStoredAssetsBytes: number;
  /** Lifetime of signed PDF links. */
  pdfLinkSeconds: number;
  /** Saved templates, stored assets and render (SPEC §5.7). */
  paid: boolean;
}

export const PLANS: Readonly<Record<Tier, Limits>> = {
  anonymous: {
    compilesPerPeriod: 3,
    period: 'day',
    templates: 0,
    templateVersions: 0,
    maxPages: 3,
    maxLatexBytes: 30 * KB,
    maxPdfBytes: 10 * MB,
    maxAssetsPerDocument: 0,
    maxAssetsBytesPerDocument: 0,
    pageImageBudget: 216,
    compileTimeoutSeconds: 15,
    compilers: ['pdflatex'],
    maxStoredAssets: 0,
    maxStoredAssetsBytes: 0,
    pdfLinkSeconds: 3600,
    paid: false,
  },
  free: {
    compilesPerPeriod: 50,
    period: 'month',
    templates: 0,
    templateVersions: 0,
    maxPages: 5,
    maxLatexBytes: 30 * KB,
    maxPdfBytes: 10 * MB,
    maxAssetsPerDocument: 2,
    maxAssetsBytesPerDocument: 1 * MB,
    pageImageBudget: 400,
    compileTimeoutSeconds: 15,
    compilers: ['pdflatex', 'xelatex'],
    maxStoredAssets: 0,
    maxStoredAssetsBytes: 0,
    pdfLinkSeconds: 24 * 3600,
    paid: false,
  },
  starter: {
    compilesPerPeriod: 500,
    period: 'month',
    templates: 10,
    templateVersions: 10,
    maxPages: 20,
    maxLatexBytes: 100 * KB,
    maxPdfBytes: 25 * MB,
    maxAssetsPerDocument: 5,
    maxAssetsBytesPerDocument: 5 * MB,
    pageImageBudget: 1000,
    compileTimeoutSeconds: 30,
    compilers: ['pdflatex', 'xelatex'],
    maxStoredAssets: 10,
    maxStoredAssetsBytes: 50 * MB,
    pdfLinkSeconds: 24 * 3600,
    paid: true,
  },
  pro: {
    compilesPerPeriod: 2000,
    period: 'month',
    templates: 50,
    templateVersions: 50,
    maxPages: 100,
    maxLatexBytes: 300 * KB,
    maxPdfBytes: 50 * MB,
    maxAssetsPerDocument: 20,
    maxAssetsBytesPerDocument: 25 * MB,
    pageImageBudget: 4000,
    compileTimeoutSeconds: 60,
    compilers: COMPILERS,
    maxStoredAssets: 50,
    maxStoredAssetsBytes: 500 * MB,
    pdfLinkSeconds: 24 * 3600,
    paid: true,
  },
  business: {
    compilesPerPeriod: 10_000,
    period: 'month',
    templates: null,
    templateVersions: 200,
    maxPages: 500,
    maxLatexBytes: 1 * MB,
    maxPdfBytes: 100 * MB,
    maxAssetsPerDocument: 50,
    maxAssetsBytesPerDocument: 75 * MB,
    pageImageBudget: 10000,
    compileTimeoutSeconds: 120,
    compilers: COMPILERS,
    maxStoredAssets: null,
    maxStoredAssetsBytes: 5 * GB,
    pdfLinkSeconds: 24 * 3600,
    paid: true,
  },
};

/**
 * The size-preview window (SPEC §4.1, §7.1): a source over the plan's own limit is previewed
 * only up to this size; above it, the plan's limit refuses it. It never lowers a plan's own
 * limit: Business compiles sources up to its 1 MB.
 */
export const SIZE_PREVIEW_MAX_BYTES = 300 * KB;
/** Size previews per rolling day per account (SPEC §8.4). */
export const PREVIEWS_PER_DAY = 5;
/** Wall clock of a whole render call (SPEC §4.5). */
export const RENDER_WALL_CLOCK_SECONDS = 60;
/** Template field limits (SPEC §8.6). */
export const TEMPLATE_NAME_MAX = 100;
export const TEMPLATE_DESCRIPTION_MAX = 500;
export const TEMPLATE_INSTRUCTIONS_MAX = 50_000;
/** Self-service sign-ups per client IP per hour (not in SPEC; see docs/api.md, "Sign-up"). */
export const SIGNUPS_PER_IP_PER_HOUR = 5;
/**
 * Fair use of what is free (not in SPEC; see docs/fair-use.md). Failed and timed-out compiles
 * cost no quota, so two other limits keep one caller from holding the service's capacity:
 * compiles in flight at once, and seconds of TeX spent on failures per window (the window and
 * factors an operator sets: QUIRE_FAILURE_WINDOW_SECONDS, QUIRE_FAILURE_BUDGET_FACTOR,
 * QUIRE_CALLER_CONCURRENCY_FACTOR).
 */
export interface FairUse {
  /** Compiles of one caller (account or keyless address) in flight at once. */
  concurrentCompiles: number;
  /** Seconds of TeX that failed or timed-out compiles (their probes and reruns included) may use per window. */
  failureSeconds: number;
  /** Its TeX jobs yield the CPU once they run long (tex/sandbox/demote.ts): free capacity is best effort. */
  yieldsCpu: boolean;
}

export const FAIR_USE: Readonly<Record<Tier, FairUse>> = {
  anonymous: { concurrentCompiles: 1, failureSeconds: 60, yieldsCpu: true },
  free: { concurrentCompiles: 1, failureSeconds: 90, yieldsCpu: true },
  starter: { concurrentCompiles: 2, failureSeconds: 300, yieldsCpu: false },
  pro: { concurrentCompiles: 4, failureSeconds: 900, yieldsCpu: false },
  business: { concurrentCompiles: 8, failureSeconds: 3600, yieldsCpu: false },
};
/** Diagnosis probe runs per caller per minute: a failing document's suggestions are confirmed only this often. */
export const PROBES_PER_MINUTE = 6;
/** Asset files are the images a job can include (SPEC §2.1) and the fonts xelatex/lualatex load by file name. */
export const FONT_EXTENSIONS = ['otf', 'ttf', 'ttc'] as const;
export const ASSET_EXTENSIONS = [...GRAPHICS_EXTENSIONS, ...FONT_EXTENSIONS] as const;

export function limitsOf(tier: Tier): Limits {
  return PLANS[tier];
}

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && (PLAN_NAMES as readonly string[]).includes(value);
}

/** Smallest plan whose limit satisfies `fits`, or null when even business does not. */
export function smallestPlan(fits: (limits: Limits) => boolean): PlanName | null {
  return PLAN_NAMES.find((plan) => fits(PLANS[plan])) ?? null;
}

/**
 * A month's counted compiles, split into those charged (never past the monthly limit) and
 * those that ran in the grace buffer, which are not charged (SPEC §8.1).
 */
export function monthlyUse(plan: PlanName, counted: number): { used_this_month: number; grace_used: number } {
  const limit = PLANS[plan].compilesPerPeriod;
  return { used_this_month: Math.min(counted, limit), grace_used: Math.max(0, counted - limit) };
}

/** Compiles a paid plan may run beyond its monthly limit before 429. */
export function graceAllowance(tier: Tier, graceFraction: number): number {
  const limits = PLANS[tier];
  if (!limits.paid) return 0;
  return Math.ceil(limits.compilesPerPeriod * graceFraction);
}
