// The compile contract shared by every door (HTTP compile, template render, public gallery,
// MCP). Input fields are `unknown` on purpose: the service validates them, so each door gets
// the same SPEC error codes for the same bad input.
import type { Caller } from '../accounts/caller.js';
import type { Compiler, PlanName } from '../quota/plans.js';
import type { TexWarning } from '../tex/warnings.js';

export interface CompileInput {
  latex: unknown;
  compiler?: unknown;
  assets?: unknown;
  use_stored_assets?: unknown;
  /** Extension of SPEC 1.5.0: the project's other text files, relative name → UTF-8 text. */
  files?: unknown;
}

export interface CompileContext {
  /** Which door called: recorded in metrics and logs. */
  via?: 'compile' | 'render' | 'public_render' | 'mcp';
  /** Epoch ms on the service's Clock (clock.ms()) after which the job is not worth finishing (render's 60 s wall clock). */
  deadline?: number;
  /** Called once every check passed and the quota slot is reserved (async jobs answer 202 then). */
  onAccepted?: () => void;
}

export interface ResolvedAssets {
  /** `blob`: the key of a stored asset's bytes in the blob store (see TexJob.files). */
  files: Array<{ name: string; data: Buffer; blob?: string }>;
  ephemeral: string[];
  stored: string[];
}

export interface AssetResolver {
  /** Validates inline `assets` and `use_stored_assets` and returns the files to place in the job. Throws ServiceError. */
  forCompile(caller: Caller, input: { assets?: unknown; use_stored_assets?: unknown }): Promise<ResolvedAssets>;
}

export interface NextStep {
  action: 'obtain_api_key' | 'retry_without_assets';
  signup_url?: string;
  env_var?: string;
  header?: string;
  remove_fields?: string[];
  card_required?: boolean;
}

export interface AccountUsage {
  plan: PlanName;
  monthly_limit: number;
  /** Charged compiles: never more than monthly_limit. */
  used_this_month: number;
  compilations_this_month: number;
  /** Compiles run in the grace buffer this month, not charged. */
  grace_used: number;
  resets_at: string;
}

export interface AnonymousUsage {
  daily_limit: number;
  used_today: number;
  remaining_today: number;
  resets_at: string;
}

/** The 200 body of compile and render (SPEC §2.2). */
export interface CompileSuccess {
  job_id: string;
  pdf_url: string;
  expires_at: string;
  pages: number;
  compilation_time_ms: number;
  compiler: Compiler;
  assets_count: number;
  ephemeral_assets_used: string[];
  stored_assets_used: string[];
  studio_url?: string;
  anonymous?: true;
  remaining_today?: number;
  note?: string;
  next_step?: NextStep;
  usage: AccountUsage | AnonymousUsage;
  quota_grace?: true;
  grace_remaining?: number;
  warning?: string;
  preview?: true;
  truncated?: boolean;
  total_pages?: number;
  plan_required?: PlanName | null;
  upgrade_url?: string;
  /** Extension of SPEC 1.5.0: what the document could still fix (undefined references, …). */
  warnings: TexWarning[];
}
