// The compile pipeline every door shares (HTTP compile, render, public gallery, MCP), in three
// steps over one checked request (request.ts): admission (fair use, size previews, quota:
// admission.ts) → the run (TeX job, result cache: run.ts) → the answer (limits on the result,
// diagnosis with probes, stored PDF, signed link, charge: answer.ts, probes.ts). Anything that
// throws before the charge costs the caller nothing.
import type { Logger } from 'pino';
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { links, openSignupUrl } from '../links.js';
import type { Metrics } from '../metrics.js';
import type { Counters } from '../quota/counters.js';
import type { PreviewStore } from '../quota/previews.js';
import type { TexQueue } from '../queue/queue.js';
import { ensureCatalog } from '../tex/diagnosis/catalog.js';
import type { AssetResolver } from '../assets/resolver.js';
import type { SigningService } from '../signing/service.js';
import { Admission, type Held } from './admission.js';
import { Answer } from './answer.js';
import type { PdfStore } from './pdfs.js';
import { WindowProbeBudget, type ProbeBudget } from './probe-budget.js';
import { probeFor, type ProbeDeps } from './probes.js';
import { readRequest, resolveRequest, texliveYear, withTexlive, type CheckedRequest, type RequestEnv } from './request.js';
import type { ResultCache } from './result-cache.js';
import { inBackground, jobOf, runJob, type RunDeps } from './run.js';
import type { CompileContext, CompileSuccess } from './types.js';

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
  /** output.sign: checked before the quota, run on the final PDF in this process (src/signing/). */
  signing: Pick<SigningService, 'prepare'>;
}

export class CompileService {
  /** The asset resolver every compile (and validate) uses. */
  readonly assets: AssetResolver;
  private readonly env: RequestEnv;
  private readonly admission: Admission;
  private readonly runs: RunDeps;
  private readonly probes: ProbeDeps;
  private readonly answer: Answer;

  constructor(private readonly deps: CompileDeps) {
    const { config, clock } = deps;
    const { upgradeUrl } = links(config);
    this.assets = deps.assets;
    this.env = { texlive: deps.texlive ?? [], previews: config.previews, upgradeUrl };
    this.admission = new Admission({ config, clock, log: deps.log, counters: deps.counters, previews: deps.previews, upgradeUrl });
    this.runs = { clock, texQueue: deps.texQueue, results: deps.results };
    this.probes = { budget: deps.probes ?? new WindowProbeBudget(config.probes, clock), texQueue: deps.texQueue, clock };
    this.answer = new Answer({ config, clock, counters: deps.counters, metrics: deps.metrics, pdfs: deps.pdfs, upgradeUrl, anonymousUpgradeUrl: openSignupUrl(config) ?? upgradeUrl });
    // The TeX Live index behind package suggestions: read from its cache (or built) in the background.
    void ensureCatalog(config.texIndexDir);
  }

  /** The size-preview budget store. */
  get previews(): PreviewStore {
    return this.admission.previews;
  }

  /** The TeX Live year of a request: one this server serves, or 422 texlive_not_available (nothing charged). */
  texliveYear(requested: unknown): string {
    return texliveYear(this.env.texlive, requested);
  }

  async compile(caller: Caller, input: unknown, context: CompileContext = {}): Promise<CompileSuccess> {
    const ruled = readRequest(caller, input, this.env);
    try {
      // Fair use before quota: a conversion of the assets already takes the caller's slot.
      const gate = this.admission.gate(ruled);
      let request: CheckedRequest;
      try {
        request = await resolveRequest(ruled, this.assets, gate.meter, this.env.upgradeUrl, this.deps.signing);
      } catch (err) {
        // A conversion that failed (or a refusal after one): its time is failure time, the slot goes back.
        await gate.abandon();
        throw err;
      }
      return await this.admission.hold(request, gate, context, (held) => this.run(request, context, held));
    } catch (err) {
      throw withTexlive(err, ruled.texlive);
    }
  }

  private async run(request: CheckedRequest, context: CompileContext, held: Held): Promise<CompileSuccess> {
    const { clock, metrics, log } = this.deps;
    const job = jobOf(request, context, clock);
    const queued = performance.now();
    const result = await runJob(this.runs, request, context, job);
    held.fair.spend(result.durationMs);
    // What the job did not spend running is time in the queue (and on the way to a worker).
    const queueMs = Math.max(0, performance.now() - queued - result.durationMs);
    metrics.compiles.inc({ engine: request.compiler, outcome: result.outcome });
    metrics.compileDuration.observe({ engine: request.compiler }, result.durationMs / 1000);
    log.info(
      { via: context.via ?? 'compile', tier: request.plan.tier, engine: request.compiler, outcome: result.outcome, passes: result.passes, cached: result.passes === 0, ms: result.durationMs, bytes: request.bytes },
      'compile',
    );
    const unsigned = await this.answer.accept(request, result, probeFor(this.probes, request.caller, context.deadline, held.fair, inBackground(context), job.files));
    // The signature is the last step, here in the host after the (cached, sandboxed) TeX result: no key in a sandbox or the cache.
    const accepted = request.sign ? { ...unsigned, pdf: await request.sign(unsigned.pdf) } : unsigned;
    if (context.deadline !== undefined && clock.ms() > context.deadline) {
      // The caller (a render past its wall clock) has already been answered: keep nothing, charge nothing.
      throw errors.compilation_timeout('The compile finished after the caller\'s deadline.', { plan: request.plan.tier, retryable: true });
    }
    return this.answer.deliver(request, result, accepted, held.quota, queueMs);
  }
}
