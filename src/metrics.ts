// Prometheus metrics, one registry per running service (tests build several side by side).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One counter per field of `stats` (counts that only grow), `${prefix}_${field}_total`, read at
 * scrape time: each scrape adds what the field grew since the last.
 */
function scrapedCounters<K extends string>(registry: Registry, prefix: string, stats: Readonly<Record<K, number>>, fields: ReadonlyArray<readonly [K, string]>): void {
  for (const [field, help] of fields) {
    let seen = 0;
    new Counter({
      name: `${prefix}_${field}_total`,
      help,
      registers: [registry],
      collect() {
        this.inc(stats[field] - seen);
        seen = stats[field];
      },
    });
  }
}

type ValidatorCounts = Record<'warm' | 'warmMs' | 'cold' | 'coldMs' | 'started' | 'failed' | 'expired' | 'ready', number>;

/**
 * PDF/A-1b validations by path (`warm`: a warm validator answered; `cold`: java in the job's
 * sandbox) with their time, and the validators' own counts, read at scrape time. On the API
 * node's registry (QUIRE_QUEUE=local) and on a worker's (worker-status.ts).
 */
export function watchValidators(registry: Registry, stats: Readonly<ValidatorCounts>): void {
  const seen = { warm: 0, cold: 0, warmMs: 0, coldMs: 0 };
  new Counter({
    name: 'quire_pdfa_validations_total',
    help: 'PDF/A-1b Preflight validations by path: warm (a waiting validator JVM) or cold (java started in the job sandbox)',
    labelNames: ['path'] as const,
    registers: [registry],
    collect() {
      for (const path of ['warm', 'cold'] as const) {
        this.inc({ path }, stats[path] - seen[path]);
        seen[path] = stats[path];
      }
    },
  });
  new Counter({
    name: 'quire_pdfa_validation_seconds_total',
    help: 'Time of PDF/A-1b Preflight validations by path (a failed warm attempt counts with the cold run after it)',
    labelNames: ['path'] as const,
    registers: [registry],
    collect() {
      for (const path of ['warm', 'cold'] as const) {
        const ms = `${path}Ms` as const;
        this.inc({ path }, (stats[ms] - seen[ms]) / 1000);
        seen[ms] = stats[ms];
      }
    },
  });
  scrapedCounters(registry, 'quire_pdfa_validators', stats, [
    ['started', 'Warm PDF/A validators started'],
    ['failed', 'Warm PDF/A validators that ended without a verdict (never ready, died, or failed a job, which then ran cold)'],
    ['expired', 'Warm PDF/A validators ended unused: fresh ones after 10 minutes, ones kept for a scope after 2'],
  ]);
  new Gauge({
    name: 'quire_pdfa_validators_ready',
    help: 'Warm PDF/A validators ready and waiting for a job',
    registers: [registry],
    collect() {
      this.set(stats.ready);
    },
  });
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'quire_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'quire_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly compiles = new Counter({
    name: 'quire_compiles_total',
    help: 'Compile jobs by engine and outcome',
    labelNames: ['engine', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly compileDuration = new Histogram({
    name: 'quire_compile_duration_seconds',
    help: 'Wall-clock time of TeX jobs, all passes included',
    labelNames: ['engine'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  /**
   * Where compile jobs' time goes, per stage: `queue` (waiting for a slot, and the transport to
   * a worker), the TeX job's own stages (sandbox, tex, inspect, reads, cleanup; see TexStages
   * in tex/job.ts) and `store` (saving the PDF). Jobs the result cache answered are not counted.
   */
  readonly jobStages = new Histogram({
    name: 'quire_job_stage_seconds',
    help: 'Time of compile jobs by stage (queue, sandbox, tex, inspect, reads, cleanup, store)',
    labelNames: ['stage'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Stage times in milliseconds, as TexResult and the compile service measure them. */
  observeStages(stages: Readonly<Record<string, number | undefined>>): void {
    for (const [stage, ms] of Object.entries(stages)) if (ms !== undefined) this.jobStages.observe({ stage }, ms / 1000);
  }

  /** The paused preambles' counters and size (tex/caches/paused-cache.ts), read at scrape time. */
  watchPausedPreambles(stats: Readonly<Record<'hits' | 'misses' | 'builds' | 'rejections' | 'fallbacks' | 'evictions' | 'waiting' | 'bytes', number>>): void {
    scrapedCounters(this.registry, 'quire_paused_preambles', stats, [
      ['hits', 'Jobs whose first pass a paused preamble ran (xelatex, lualatex, and pdflatex PDF/A)'],
      ['misses', 'Jobs of a verified preamble that found no paused process waiting'],
      ['builds', 'Paused preamble processes started (verifications included)'],
      ['rejections', 'Preambles refused after a paused run differed from a cold one'],
      ['fallbacks', 'Paused runs that ended cold (process gone or outcome doubtful)'],
      ['evictions', 'Paused processes ended for the count, memory or age bounds'],
    ]);
    for (const [field, name, help] of [
      ['waiting', 'quire_paused_preambles_waiting', 'Paused preamble processes waiting for a job'],
      ['bytes', 'quire_paused_preambles_bytes', 'Resident bytes of the waiting paused preamble processes'],
    ] as const) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(stats[field]);
        },
      });
    }
  }

  /** The PDF/A-1b validations, warm or cold, and the warm validators (tex/output/warm-validator.ts). */
  watchValidators(stats: Readonly<ValidatorCounts>): void {
    watchValidators(this.registry, stats);
  }

  /** The result cache's lookups (compile/result-cache.ts), read at scrape time. */
  watchResultCache(stats: Readonly<Record<'hits' | 'misses', number>>): void {
    scrapedCounters(this.registry, 'quire_result_cache', stats, [
      ['hits', 'Compiles answered from the result cache (no TeX ran)'],
      ['misses', 'Compiles the result cache did not hold (TeX ran)'],
    ]);
  }

  /** The preamble cache's counters and size (tex/caches/format-cache.ts), read at scrape time. */
  watchPreambleCache(cache: { readonly stats: Readonly<Record<'hits' | 'primed' | 'misses' | 'builds' | 'rejections' | 'evictions', number>>; readonly bytes: number }): void {
    scrapedCounters(this.registry, 'quire_preamble_cache', cache.stats, [
      ['hits', 'pdflatex jobs that ran with a cached preamble format'],
      ['primed', 'Of those, jobs whose format engine was started before they came (QUIRE_PRIMED_FORMATS)'],
      ['misses', 'pdflatex jobs with a cacheable preamble and no usable format'],
      ['builds', 'Preamble formats built (in the background)'],
      ['rejections', 'Preamble formats thrown away (build failed, not identical to a cold compile, or a run with it failed)'],
      ['evictions', 'Preamble formats evicted to stay within QUIRE_PREAMBLE_CACHE_MB'],
    ]);
    new Gauge({
      name: 'quire_preamble_cache_bytes',
      help: 'Bytes of preamble formats held in memory',
      registers: [this.registry],
      collect() {
        this.set(cache.bytes);
      },
    });
  }

  constructor() {
    // Process metrics (CPU, memory, event-loop lag, handles) of this service, read at scrape time.
    collectDefaultMetrics({ register: this.registry, prefix: 'quire_' });
  }
}
