// The compile contract shared by every door (HTTP compile, template render, public gallery,
// MCP). Input fields are `unknown` on purpose: the service validates them, so each door gets
// the same SPEC error codes for the same bad input. Wire bodies are declared once, as the
// TypeBox schemas of schemas.ts; their types here are derived from them.
import type { Static } from '@sinclair/typebox';
import type { PlanName } from '../quota/plans.js';
import type { CompileFailureBody, CompileInputBody, CompileSuccessBody, NextStepBody } from './schemas.js';

/** latex, compiler, assets, use_stored_assets and files (the project's other text files). */
export type CompileInput = Static<typeof CompileInputBody>;

export interface CompileContext {
  /** Which door called: recorded in metrics and logs. */
  via?: 'compile' | 'render' | 'public_render' | 'mcp';
  /** Epoch ms on the service's Clock (clock.ms()) after which the job is not worth finishing (render's 60 s wall clock). */
  deadline?: number;
  /** Called once every check passed and the quota slot is reserved (async jobs answer 202 then). */
  onAccepted?: () => void;
  /** A batch item: nobody waits on this one compile, so the queue serves it after interactive ones (async jobs are known by onAccepted). */
  background?: boolean;
}

export type NextStep = Static<typeof NextStepBody>;

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
export type CompileSuccess = Static<typeof CompileSuccessBody>;

/** The 422 body of a compile that TeX refused (SPEC §2.3). */
export type CompileFailure = Static<typeof CompileFailureBody>;
