// Probe compiles that confirm a package suggestion (issue 19): sandboxed one-pass jobs, like
// any compile, under the caller's probe budget (probe-budget.ts), bounded by CPU time and the
// caller's deadline. None runs for a caller over its failure budget; their time counts as the
// failed compile's (docs/fair-use.md).
import { tierOf, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import { callerId, type FairTicket } from '../quota/fair-use.js';
import { FAIR_USE } from '../quota/plans.js';
import type { TexQueue } from '../queue/queue.js';
import type { ProbeCompile } from '../tex/diagnosis/probe.js';
import type { TexJob } from '../tex/job.js';
import { ProbeRefused, type ProbeBudget } from './probe-budget.js';

/**
 * A probe's wall clock: only a safety net. Its CPU time is what bounds it (the probe budget's
 * grant), so a loaded machine makes a probe slower, never a different verdict.
 */
const PROBE_WALL_MS = 20_000;
/** Less time than this left before the caller's deadline: no probe starts. */
const PROBE_MIN_WALL_MS = 1_000;
/** Diagnosis probes get one TeX pass each: with the document's own passes (5 at most) and 3 probes, a failing request runs at most 8. */
const PROBE_PASSES = 1;

export interface ProbeDeps {
  budget: ProbeBudget;
  texQueue: TexQueue;
  clock: Clock;
}

/**
 * The probe runner the diagnosis of one failed compile may use. `files`: the job's other files
 * (project files and assets), so a probe of a project compiles with its classes, \input files and images.
 */
export function probeFor(deps: ProbeDeps, caller: Caller, deadline: number | undefined, fair: FairTicket, background: boolean, files: TexJob['files'] = []): ProbeCompile {
  const who = caller.kind === 'account' ? `account:${caller.account.id}` : `address:${caller.ip}`;
  return (source, compiler) => {
    const timeoutMs = Math.min(PROBE_WALL_MS, deadline !== undefined ? deadline - deps.clock.ms() : Infinity);
    if (timeoutMs < PROBE_MIN_WALL_MS || fair.overBudget) return Promise.reject(new ProbeRefused('caller'));
    return deps.budget.run(who, async ({ cpuSeconds }) => {
      const result = await deps.texQueue.run({
        source,
        compiler,
        ...(files && files.length > 0 ? { files } : {}),
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
