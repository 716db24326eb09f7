// Admission: what a checked compile must hold before TeX runs, taken in this order and given
// back on every way out. Fair use first (docs/fair-use.md): a caller over its failure budget or
// with its compiles in flight is refused at once, before its first SVG or EPS conversion (a
// sandbox run like TeX) or else before TeX; then a size preview's daily budget and one-at-a-time
// lock (SPEC §4.1); then the quota reservation (SPEC §4). A compile that does not deliver gives
// every one of them back, and its 422 carries the caller's usage read after the slot went back.
import type { Logger } from 'pino';
import { tierOf, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, ServiceError, refused } from '../errors.js';
import { CompileQuota, type Ticket } from '../quota/compile-quota.js';
import type { Counters } from '../quota/counters.js';
import { FairUse, type FairTicket } from '../quota/fair-use.js';
import { limitsOf, PREVIEWS_PER_DAY, smallestPlan, type Tier } from '../quota/plans.js';
import type { PreviewStore } from '../quota/previews.js';
import type { ConversionMeter } from '../assets/resolver.js';
import type { CheckedRequest, RuledRequest } from './request.js';
import type { CompileContext } from './types.js';
import { usageOf } from './usage.js';

const PREVIEW_RETRY_SECONDS = 10;
const PREVIEW_UNAVAILABLE_RETRY_SECONDS = 60;

export interface AdmissionDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  counters: Counters;
  previews: PreviewStore;
  upgradeUrl: string;
}

/** The caller's in-flight slot, taken at the first conversion or else when the compile is admitted. */
export interface FairGate {
  /** For the asset resolver: a conversion takes the slot and spends on it. */
  meter: ConversionMeter;
  /** A refusal before admission: a slot a conversion took goes back, its time as failure time. */
  abandon(): Promise<void>;
  /** The slot: the one a conversion took, or taken now. */
  slot(): Promise<FairTicket>;
}

/** What an admitted compile holds while it runs. */
export interface Held {
  fair: FairTicket;
  quota: Ticket;
}

function previewInProgress(tier: Tier): ServiceError {
  return refused(
    { code: 'preview_in_progress', message: 'A size preview is already compiling for this account; previews run one at a time.', details: { plan: tier }, retryable: true },
    PREVIEW_RETRY_SECONDS,
  );
}

export class Admission {
  private readonly quota: CompileQuota;
  private readonly fair: FairUse;

  constructor(private readonly deps: AdmissionDeps) {
    this.quota = new CompileQuota(deps.counters, deps.clock, deps.config);
    this.fair = new FairUse(deps.counters, deps.clock, deps.config);
  }

  /** The size-preview budget store. */
  get previews(): PreviewStore {
    return this.deps.previews;
  }

  /** The fair-use gate of a request whose rules passed (its assets are yet to be resolved). */
  gate(request: RuledRequest): FairGate {
    const admit = () => this.fair.admit(request.caller).catch((err: unknown) => this.previewBusy(err, request));
    let converting: FairTicket | undefined;
    return {
      meter: {
        begin: async () => void (converting ??= await admit()),
        spent: (ms) => converting?.spend(ms),
      },
      abandon: async () => void (await converting?.finish(false)),
      slot: async () => converting ?? (await admit()),
    };
  }

  /**
   * Runs `work` holding the fair-use slot of `gate`, the size preview and the quota
   * reservation (`context.onAccepted` is called once it is reserved). `work` commits the
   * reservation when it delivers; when it throws, everything goes back.
   */
  async hold<T>(request: CheckedRequest, gate: FairGate, context: CompileContext, work: (held: Held) => Promise<T>): Promise<T> {
    const { caller } = request;
    const fair = await gate.slot();
    let delivered = false;
    try {
      const preview = request.sizePreview && caller.kind === 'account' ? await this.beginSizePreview(caller.account.id, request.plan.tier, request.bytes) : null;
      try {
        const quota = await this.quota.reserve(caller);
        context.onAccepted?.();
        try {
          const result = await work({ fair, quota });
          delivered = true;
          return result;
        } catch (err) {
          await quota.release();
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
      usage = await usageOf(this.deps, caller);
    } catch (lookup) {
      this.deps.log.warn({ err: lookup }, 'usage unavailable for a compile failure body');
      return err;
    }
    return err.withDetails({ usage });
  }

  /**
   * SPEC §4.1 names the refusal of a size preview while another compiles: when the one compile
   * in flight that fair use counted is itself a size preview, the answer is preview_in_progress.
   */
  private async previewBusy(err: unknown, request: RuledRequest): Promise<never> {
    const { caller } = request;
    if (!request.sizePreview || caller.kind !== 'account' || !(err instanceof ServiceError) || err.code !== 'too_many_concurrent_compiles') throw err;
    // A store that cannot answer leaves fair use's own refusal.
    if (await this.deps.previews.inProgress(caller.account.id).catch(() => false)) throw previewInProgress(tierOf(caller));
    throw err;
  }

  private async beginSizePreview(accountId: number, tier: Tier, bytes: number) {
    const limits = limitsOf(tier);
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
        upgrade_url: this.deps.upgradeUrl,
        retryable: false,
      },
    );
  }
}
