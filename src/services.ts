// The service layer, assembled once. HTTP routes, MCP tools and the CLI all call into it.
// Assembly has three steps: open the stores, build the services, start background work
// (janitor, reservation sweeps, job recovery and heartbeat, workspace sweep, warm workers).
// The CLI does the first two only: a command run beside a live server must not sweep, recover
// or clear anything that server holds.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import pino from 'pino';
import { AccountService } from './accounts/accounts.js';
import { AssetService } from './assets/library.js';
import { LibraryAssetResolver } from './assets/resolver.js';
import { SignupService } from './accounts/signup.js';
import { UsageService } from './accounts/usage.js';
import { BullTexQueue } from './queue/bullmq.js';
import { PdfStore } from './compile/pdfs.js';
import { ResultCache } from './compile/result-cache.js';
import { CompileService } from './compile/service.js';
import { domainQueue } from './queue/domain.js';
import { SqlPreviewStore, type PreviewStore } from './quota/previews.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { Metrics } from './metrics.js';
import { leaseOwner, SqlCounters, type Counters } from './quota/counters.js';
import { RedisCounters } from './quota/redis-counters.js';
import { LocalBlobStore, type BlobStore } from './storage/blobs.js';
import { migrate, openDb, type Db } from './storage/db.js';
import { checkTemplate } from './templates/liquid.js';
import { renderPool } from './templates/render-pool.js';
import { BatchService } from './templates/batch.js';
import { TemplateService } from './templates/service.js';
import { TemplateVersionService } from './templates/version-service.js';
import { TemplateValidateService } from './templates/validate-service.js';
import { ValidateService } from './compile/validate.js';
import { PdfCheckService } from './compile/pdf-check.js';
import { loadCatalog } from './gallery/catalog.js';
import { GalleryService } from './gallery/service.js';
import { probeEngines, type EngineReport } from './tex/image/engines.js';
import { prepareFormats, type Formats } from './tex/caches/formats.js';
import { prepareLuaCache } from './tex/caches/luacache.js';
import { sandboxUid, validatorUid } from './tex/sandbox/uids.js';
import { LocalTexPool } from './queue/local-pool.js';
import type { TexQueue } from './queue/queue.js';
import { FormatCache } from './tex/caches/format-cache.js';
import { localRunner } from './tex/local-runner.js';
import { pausedStats, type PausedStats } from './tex/caches/paused-cache.js';
import { validatorStats, type ValidatorStats } from './tex/output/warm-validator.js';
import { servedImages, type TexImage } from './tex/image/store.js';
import { defaultImageRoot, useDefaultImage } from './tex/image/default.js';
import { claimWorkRoot } from './tex/sandbox/sweep.js';
import { IdempotencyStore } from './idempotency/store.js';
import { Deliveries } from './jobs/deliveries.js';
import { JobService, STALE_MS as JOB_STALE_MS } from './jobs/service.js';
import { JobStore } from './jobs/store.js';
import { WebhookSecrets } from './webhooks/secrets.js';
import { Sealer } from './signing/seal.js';
import { SigningService } from './signing/service.js';
import { IdentityStore } from './signing/store.js';

/** Finished async jobs are kept a week after their last change (their PDF links expire sooner). */
const JOB_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  db: Db;
  blobs: BlobStore;
  counters: Counters;
  metrics: Metrics;
  engines: EngineReport;
  /** The TeX images this node serves, newest (the default) first. */
  images: TexImage[];
  accounts: AccountService;
  usage: UsageService;
  /** TeX jobs (compiles, batch merges): a bounded local pool, or `quire worker` processes behind BullMQ (QUIRE_QUEUE). */
  texQueue: TexQueue;
  pdfs: PdfStore;
  compile: CompileService;
  /** The stored asset library (also resolves the assets of each compile). */
  assets: AssetService;
  signup: SignupService;
  /** Saved V1/V2 templates and render. */
  templates: TemplateService;
  /** Kept versions of saved templates: list, read, restore. */
  templateVersions: TemplateVersionService;
  /** Free checks of a compile request, and of render data against a template (docs/api.md, "Validate"). */
  validate: ValidateService;
  templateValidate: TemplateValidateService;
  /** The conformance checks on an uploaded PDF (docs/pdf-output.md, issue 40). */
  pdfCheck: PdfCheckService;
  /** Batch render of a V2 template, as an async job. */
  batches: BatchService;
  /** The public template gallery (list, detail, render, previews). */
  gallery: GalleryService;
  /** Async jobs and their webhook deliveries (docs/async-and-webhooks.md). */
  asyncJobs: JobService;
  webhookSecrets: WebhookSecrets;
  /** Stored signing identities and the output.sign step (src/signing/). */
  signing: SigningService;
  idempotency: IdempotencyStore;
  /** Starts background work; the server calls it once before serving. Returns the job workspaces it swept. */
  start(): Promise<{ swept: string[] }>;
  /** Stops background work and closes connections. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** Replace parts (a failing store, a fake engine report) in tests. */
  overrides?: Partial<Pick<Services, 'blobs' | 'counters' | 'engines' | 'texQueue'>> & { previews?: PreviewStore };
}

/** Opens the stores and builds the services, and starts them: what the server and tests use. */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const services = await openServices(config, options);
  await services.start();
  return services;
}

/** Opens the stores and builds the services; starts nothing (the CLI). */
export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? pino({ level: config.logLevel });
  const db = await openDb(config.databaseUrl, (err) => log.warn({ err: err.message }, 'database connection lost; it reconnects on the next query'));
  await migrate(db);

  const cleanups: Array<() => Promise<void> | void> = [];
  const blobs = options.overrides?.blobs ?? (await blobStore(config, cleanups));
  const counters = options.overrides?.counters ?? sharedCounters(config, db, clock, log, cleanups);
  // Probed in the default image as it stands before the pool names it (QUIRE_TEXLIVE's newest ready one), as before the image was handed in.
  const engines = options.overrides?.engines ?? (await probeEngines(defaultImageRoot()));
  const accounts = new AccountService(db.kysely, clock, config.keyPrefix);
  const usage = new UsageService(db.kysely, counters, clock, config);
  const metrics = new Metrics();
  const formats = new FormatCache(config.preambleCacheBytes);
  metrics.watchPreambleCache(formats);
  const paused = pausedStats();
  metrics.watchPausedPreambles(paused);
  const validations = validatorStats();
  metrics.watchValidators(validations);
  const texQueue = domainQueue(options.overrides?.texQueue ?? compileQueue(config, blobs, log, formats, paused, validations));
  cleanups.push(() => texQueue.close());
  const pdfs = new PdfStore(db.kysely, blobs, clock);
  cleanups.push(() => pdfs.stopJanitor());
  const assets = new AssetService(db, blobs, clock, config, counters);
  const previews = options.overrides?.previews ?? new SqlPreviewStore(db.kysely, counters);
  const results = new ResultCache({ maxEntries: config.resultCacheEntries, maxBytes: config.resultCacheBytes });
  metrics.watchResultCache(results.stats);
  const images = servedImages(config);
  const texlive = images.map((image) => image.year);
  // The one asset resolver of compile and validate: the stored library's.
  const resolver = new LibraryAssetResolver(assets, config);
  const signing = new SigningService(new IdentityStore(db.kysely), new Sealer(config.secret), config, clock, log);
  const compile = new CompileService({ config, clock, log, counters, metrics, texQueue, pdfs, previews, results, texlive, signing, assets: resolver });
  const templates = new TemplateService(db, clock, config, counters, compile, assets);

  const gallery = new GalleryService({
    templates: loadCatalog(),
    baseUrl: config.baseUrl,
    compiler: compile,
    texQueue,
    blobs,
    clock,
  });

  const webhookSecrets = new WebhookSecrets(db.kysely, clock);
  const idempotency = new IdempotencyStore(db.kysely, clock);
  const callbackPolicy = { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivate };
  const jobStore = new JobStore(db.kysely, clock, randomUUID());
  const deliveries = new Deliveries(jobStore, webhookSecrets, callbackPolicy, clock, log);
  const asyncJobs = new JobService(jobStore, deliveries, callbackPolicy, clock, log, config.baseUrl, JOB_STALE_MS[db.dialect]);
  cleanups.push(() => asyncJobs.close());
  const batches = new BatchService({ config, clock, log, pdfs, blobs, templates, asyncJobs, texQueue });
  let sweepKeys: NodeJS.Timeout | undefined;
  cleanups.push(() => clearInterval(sweepKeys));

  const start = async (): Promise<{ swept: string[] }> => {
    // In the embedded default no other node can hold a reservation, so any left are from a crash.
    if (db.dialect === 'sqlite' && !config.redisUrl) await counters.clearReservations();
    // A restart of a killed node: the leases its previous instance held end now, not in 30 s.
    else await counters.endPreviousInstance();
    // Expired counters go too: old periods, leases of dead nodes, a preview lock left by a crash.
    pdfs.startJanitor(
      (err) => log.error({ err }, 'janitor failed'),
      () => counters.sweep(clock.now()),
    );
    await asyncJobs.recover();
    sweepKeys = setInterval(() => {
      void idempotency.sweep().catch((err) => log.error({ err }, 'idempotency sweep failed'));
      void jobStore.sweep(new Date(clock.now().getTime() - JOB_RETENTION_MS)).catch((err) => log.error({ err }, 'job sweep failed'));
    }, 60 * 60 * 1000);
    sweepKeys.unref();
    // Job workspaces (customer source) a killed predecessor left behind go before we serve.
    const swept = (await texQueue.start?.()) ?? [];
    // Liquid renders in worker threads; start them now so the first render does not wait.
    renderPool().warm();
    return { swept };
  };

  return {
    config,
    clock,
    log,
    db,
    blobs,
    counters,
    metrics,
    engines,
    images,
    accounts,
    usage,
    texQueue,
    pdfs,
    compile,
    assets,
    signup: new SignupService(accounts, counters, clock, config.signup),
    templates,
    templateVersions: new TemplateVersionService(templates),
    validate: new ValidateService({ config, clock, counters, assets: resolver, templatePolicy: checkTemplate }),
    templateValidate: new TemplateValidateService(templates, { counters, clock, perMinute: () => config.validatePerMinute }),
    pdfCheck: new PdfCheckService({ config, clock, counters }),
    batches,
    gallery,
    asyncJobs,
    webhookSecrets,
    signing,
    idempotency,
    start,
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
      await db.close();
    },
  };
}

/** PDFs, assets and previews: in the S3 bucket when QUIRE_S3_BUCKET is set, else under the data dir. */
export async function blobStore(config: Config, cleanups: Array<() => Promise<void> | void>): Promise<BlobStore> {
  if (!config.s3) return new LocalBlobStore(join(config.dataDir, 'blobs'));
  // Loaded only when used: the AWS SDK takes most of a second to import.
  const { S3BlobStore } = await import('./storage/s3-blobs.js');
  const store = S3BlobStore.create(config.s3);
  cleanups.push(() => store.close());
  return store;
}

/** Quota counters: in Redis when QUIRE_REDIS_URL is set, else in the database. */
function sharedCounters(config: Config, db: Db, clock: Clock, log: Logger, cleanups: Array<() => Promise<void> | void>): Counters {
  const leaseMs = config.nodeHeartbeatTimeoutSeconds * 1000;
  const owner = leaseOwner(config.nodeName);
  let counters: Counters;
  if (!config.redisUrl) counters = new SqlCounters(db.kysely, db.dialect, () => clock.ms(), leaseMs, owner);
  else {
    // Redis counters keep the system clock: their keys expire by Redis's own time (PEXPIREAT).
    const redis = RedisCounters.connect(config.redisUrl, config.redisPrefix, (err) => log.warn({ err: err.message }, 'redis connection error'), { leaseMs, owner });
    cleanups.push(() => redis.close());
    counters = redis;
  }
  // The node's heartbeat: its live leases last another lease length; a killed node's end.
  const heartbeat = setInterval(() => void counters.heartbeat().catch((err) => log.warn({ err }, 'lease heartbeat failed')), leaseMs / 3);
  heartbeat.unref();
  cleanups.push(() => clearInterval(heartbeat));
  return counters;
}

/** This process's pool of sandboxed TeX slots (the API node's with QUIRE_QUEUE=local, a worker's). */
export function localCompilePool(config: Config, preambles = new FormatCache(config.preambleCacheBytes), paused = pausedStats(), validations = validatorStats()): LocalTexPool {
  const images = servedImages(config);
  // The lookups that run no job (diagnosis, templates, one-off tools) use the default year's image.
  useDefaultImage(images[0]?.root);
  const runner = (image: TexImage | undefined, validators: number) => {
    return localRunner(
      {
        workRoot: workRoot(),
        isolate: config.sandbox,
        root: image?.root,
        ...imageCaches(image),
        demoteAfterMs: config.demoteAfterMs,
        // TeX Live 2024 and older: their luaotfload needs an absolute-path read (pool.ts).
        luaReadsByPath: image !== undefined && Number(image.year) < 2026,
      },
      { formats: preambles, primed: { maxCount: config.primedFormats } },
      { maxCount: config.pausedPreambles, maxBytes: config.pausedPreambleBytes, stats: paused },
      // Warm validators only beside the default image: their uids are this node's, one set.
      { count: validators, uid: (n) => sandboxUid(validatorUid(n)), stats: validations },
    );
  };
  const runners = images.length > 0 ? new Map(images.map((image, i) => [image.year as string, runner(image, i === 0 ? config.warmValidators : 0)])) : runner(undefined, config.warmValidators);
  return new LocalTexPool(runners, config.compileConcurrency, config.compileQueueLimit, config.sandbox, config.compileQueueWaitMs);
}

// Outside the (private) data dir: the unprivileged job uids must reach their workspace and
// the shared lualatex font cache.
function workRoot(): string {
  return join(tmpdir(), 'quire-jobs');
}

/**
 * The caches the pool keeps per image, in `<work root>/texlive-<year>-<build time>/`: the
 * inflated formats (prepared when the pool starts) and lualatex's font cache (at the first
 * lualatex job). Named by the image's build time too: a rebuilt image gets fresh caches.
 */
function imageCaches(image: TexImage | undefined): { formats: () => Promise<Formats>; luaCache: () => Promise<string> } {
  const own = image ? join(workRoot(), `texlive-${image.year}-${image.builtAt.replace(/\D/g, '').slice(0, 14)}`) : workRoot();
  return { formats: () => prepareFormats(own, image?.root), luaCache: () => prepareLuaCache(own, image?.root, systemClock) };
}

/**
 * Prepares every served image's caches now, as the pool would: the container image runs this
 * at build (`texlive-images.js --warm`), so that a new container's first lualatex job does not
 * spend seconds building luaotfload's font database. The work root is claimed as the pool
 * claims it, so the service trusts what is left in it.
 */
export async function warmImageCaches(config: Pick<Config, 'sandbox' | 'texlive'>): Promise<Array<{ year: string; formats: string; luaCache: string }>> {
  await claimWorkRoot(workRoot());
  const warmed = [];
  for (const image of servedImages(config)) {
    const caches = imageCaches(image);
    const formats = await caches.formats();
    warmed.push({ year: image.year, formats: formats.dir, luaCache: await caches.luaCache() });
  }
  return warmed;
}

/** Where TeX runs: in this process, or (QUIRE_QUEUE=bullmq) on `quire worker` processes. */
function compileQueue(config: Config, blobs: BlobStore, log: Logger, formats: FormatCache, paused: PausedStats, validations: ValidatorStats): TexQueue {
  if (config.queue === 'local') return localCompilePool(config, formats, paused, validations);
  return new BullTexQueue({ redisUrl: config.redisUrl!, redisPrefix: config.redisPrefix, blobs, queueLimit: config.compileQueueLimit, log });
}
