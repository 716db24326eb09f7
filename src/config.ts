// Every setting the service reads from its environment, validated once at start.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, homedir, hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { imageSettings, ImageSettingsError, type TexliveSettings } from './tex/image/settings.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  databaseUrl: string;
  /** When set, quota counters live in Redis (shared by API nodes) instead of the database. */
  redisUrl: string | null;
  /** Prefix of every Redis key, so several installations can share one Redis. */
  redisPrefix: string;
  /** `local`: TeX runs in this process's pool. `bullmq`: on `quire worker` processes, through Redis. */
  queue: 'local' | 'bullmq';
  /** When set, PDFs, stored assets and gallery previews live in this S3-compatible bucket. */
  s3: { bucket: string; endpoint: string | null; region: string } | null;
  secret: string;
  keyPrefix: string;
  trustProxy: boolean | string;
  /** The TeX images (tex/image/): which years setup builds and where they live. */
  texlive: TexliveSettings;
  /** `false` only when an operator explicitly runs TeX without bubblewrap. */
  sandbox: boolean;
  /** Concurrent TeX jobs on this node. */
  compileConcurrency: number;
  /** Jobs allowed to wait for a free slot before callers get 503 server_busy. */
  compileQueueLimit: number;
  /** An interactive compile that would wait longer for a slot gets 503 server_busy (in-process pool; 0: no bound). */
  compileQueueWaitMs: number;
  /** Hard cap of a request body in bytes (base64 assets included). */
  bodyLimit: number;
  /** Grace buffer of paid plans as a fraction of the monthly limit. */
  graceFraction: number;
  /** Keyless compiles allowed per hour across all anonymous callers. */
  anonymousHourlyCeiling: number;
  /** Fair use (see quota/plans.ts FAIR_USE): the failure-budget window and factors on the table. */
  failureWindowSeconds: number;
  failureBudgetFactor: number;
  callerConcurrencyFactor: number;
  /** Seconds without a heartbeat after which a node's reservation leases end (see quota/counters.ts). */
  nodeHeartbeatTimeoutSeconds: number;
  /** This node's stable name: a restarted node ends the leases its previous instance left. */
  nodeName: string;
  /** Port of a `quire worker`'s /health and /metrics; 0 turns them off. */
  workerPort: number;
  /** Renders per minute per account on the V2 render route. */
  renderPerMinute: number;
  /** Validate calls per minute per caller (account or keyless address); validate is free. */
  validatePerMinute: number;
  /** Largest PDF POST /api/v1/pdf/check (MCP check_pdf) reads (issue 40). */
  pdfCheckMaxBytes: number;
  /** When false, over-limit documents are refused instead of previewed. */
  previews: boolean;
  /** Result cache bounds (see compile/result-cache.ts); 0 entries turns it off. */
  resultCacheEntries: number;
  resultCacheBytes: number;
  /** Preamble cache budget in bytes of dumped formats (see tex/caches/format-cache.ts); 0 turns it off. */
  preambleCacheBytes: number;
  /** Paused preambles for xelatex and lualatex (see tex/caches/paused-cache.ts): most waiting processes (0 turns them off), and their resident bytes. */
  pausedPreambles: number;
  /** Sandboxes started ahead with a cached preamble format's engine (see tex/caches/primed-formats.ts); 0 turns them off. */
  primedFormats: number;
  pausedPreambleBytes: number;
  /** Warm PDF/A-1b validators kept ready (see tex/output/warm-validator.ts); 0 turns them off. */
  warmValidators: number;
  /** A keyless or Free caller's job still running after this many ms drops to the lowest CPU priority (see tex/sandbox/demote.ts); 0 (the default) never. */
  demoteAfterMs: number;
  /** Where the TeX Live index behind package suggestions is cached (see tex/diagnosis/catalog.ts). */
  texIndexDir: string;
  /** Diagnosis probe compiles (see compile/probe-budget.ts): runs per caller per minute, CPU seconds per run, node CPU seconds per minute. */
  probes: { perCallerPerMinute: number; cpuSecondsPerProbe: number; reserveCpuSecondsPerMinute: number };
  /** `open` lets anyone create a Free account at /signup. */
  signup: 'open' | 'closed';
  /** Browser origins allowed to call /mcp (`*`: any); a request without Origin always passes. */
  mcpAllowedOrigins: string[];
  logLevel: string;
  /** Webhook callback URLs may be http:// (else https only). */
  webhookAllowHttp: boolean;
  /** Webhook callbacks may reach loopback and private addresses (development and tests). */
  webhookAllowPrivate: boolean;
  /** RFC 3161 timestamp authority for output.sign.timestamp (PAdES B-T); none by default. */
  tsaUrl: string | undefined;
  /** The TSA may be on a loopback or private address (development and tests). */
  tsaAllowPrivate: boolean;
}

export class ConfigError extends Error {}

export type { TexliveSettings };

/** QUIRE_TEXLIVE and QUIRE_TEXLIVE_DIR (tex/image/settings.ts), a bad year as a ConfigError. */
export function texliveSettings(env: Env = process.env): TexliveSettings {
  try {
    return imageSettings(env);
  } catch (err) {
    throw err instanceof ImageSettingsError ? new ConfigError(err.message) : err;
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 10) {
    throw new ConfigError(`${name} must be a number from 0 to 10, got "${raw}"`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got "${env[name]}"`);
}

function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  // Fastify accepts a comma-separated list of addresses or CIDR ranges.
  return raw;
}

/**
 * QUIRE_MCP_ALLOWED_ORIGINS: comma-separated origins (`https://app.example:8443`) or `*`.
 * Defaults to the base URL's own origin, so no other web page can drive /mcp (DNS rebinding).
 */
function mcpOrigins(raw: string | undefined, baseUrl: string): string[] {
  if (raw === undefined || raw.trim() === '') return [new URL(baseUrl).origin];
  const origins = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError('QUIRE_MCP_ALLOWED_ORIGINS is either * or a list of origins, not both');
    return ['*'];
  }
  return origins.map((entry) => {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      // reported below
    }
    const bare = url && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!url || !bare || !['http:', 'https:'].includes(url.protocol) || entry.includes('?') || entry.includes('#')) {
      throw new ConfigError(`QUIRE_MCP_ALLOWED_ORIGINS: "${entry}" is not an origin such as https://app.example or http://localhost:5173 (scheme, host and port only)`);
    }
    return url.origin;
  });
}

/** The HMAC secret: from the environment, else generated once and kept in the data dir. */
function loadSecret(env: Env, dataDir: string): string {
  const given = env.QUIRE_SECRET;
  if (given) {
    if (given.length < 16) throw new ConfigError('QUIRE_SECRET must be at least 16 characters');
    return given;
  }
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  return secret;
}

/**
 * QUIRE_TEX_INDEX_DIR, else $XDG_CACHE_HOME/quire, else ~/.cache/quire: machine-wide, because
 * the index depends only on the TeX Live installed, not on a data dir.
 */
export function texIndexDir(env: Env = process.env): string {
  if (env.QUIRE_TEX_INDEX_DIR) return resolve(env.QUIRE_TEX_INDEX_DIR);
  const xdg = env.XDG_CACHE_HOME;
  try {
    return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), 'quire');
  } catch {
    return join(tmpdir(), 'quire-cache');
  }
}

/** The diagnosis probe budget (compile/probe-budget.ts, docs/diagnosis.md). */
export function probeSettings(env: Env = process.env): Config['probes'] {
  return {
    perCallerPerMinute: integer(env, 'QUIRE_PROBES_PER_MINUTE', 6, 0, 10_000),
    cpuSecondsPerProbe: integer(env, 'QUIRE_PROBE_CPU_SECONDS', 3, 1, 60),
    reserveCpuSecondsPerMinute: integer(env, 'QUIRE_PROBE_CPU_PER_MINUTE', 60, 0, 100_000),
  };
}

/** The bucket from QUIRE_S3_BUCKET; endpoint and region from the standard AWS variables. */
function s3Settings(env: Env): Config['s3'] {
  const bucket = env.QUIRE_S3_BUCKET;
  if (!bucket) return null;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(`QUIRE_S3_BUCKET must be a valid bucket name (3 to 63 lowercase letters, digits, dots, hyphens), got "${bucket}"`);
  }
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || null;
  if (endpoint !== null && !/^https?:\/\//.test(endpoint)) {
    throw new ConfigError(`AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http(s) URL, got "${endpoint}"`);
  }
  return { bucket, endpoint, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1' };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(env.QUIRE_DATA_DIR || './data');
  mkdirSync(dataDir, { recursive: true });

  const baseUrl = (env.QUIRE_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const url = new URL(baseUrl);
    if (!['http:', 'https:'].includes(url.protocol)) throw new Error();
  } catch {
    throw new ConfigError(`QUIRE_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  }

  const databaseUrl = env.QUIRE_DATABASE_URL || `sqlite://${join(dataDir, 'quire.db')}`;
  if (!/^(sqlite:|postgres(ql)?:)/.test(databaseUrl)) {
    throw new ConfigError('QUIRE_DATABASE_URL must start with sqlite:// or postgres://');
  }

  const redisUrl = env.QUIRE_REDIS_URL || null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('QUIRE_REDIS_URL must start with redis:// or rediss://');
  }

  const queue = env.QUIRE_QUEUE || 'local';
  if (queue !== 'local' && queue !== 'bullmq') {
    throw new ConfigError(`QUIRE_QUEUE must be local or bullmq, got "${queue}"`);
  }
  if (queue === 'bullmq' && redisUrl === null) {
    throw new ConfigError('QUIRE_QUEUE=bullmq needs QUIRE_REDIS_URL (the queue lives in Redis)');
  }

  const s3 = s3Settings(env);

  const keyPrefix = env.QUIRE_KEY_PREFIX ?? 'svc_';
  if (!/^[A-Za-z0-9_]{1,16}$/.test(keyPrefix)) {
    throw new ConfigError('QUIRE_KEY_PREFIX must be 1 to 16 letters, digits or underscores');
  }

  const signup = env.QUIRE_SIGNUP || 'closed';
  if (signup !== 'open' && signup !== 'closed') {
    throw new ConfigError(`QUIRE_SIGNUP must be open or closed, got "${signup}"`);
  }

  const cores = availableParallelism();
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir,
    baseUrl,
    databaseUrl,
    redisUrl,
    redisPrefix: env.QUIRE_REDIS_PREFIX || 'quire:',
    queue,
    s3,
    secret: loadSecret(env, dataDir),
    keyPrefix,
    trustProxy: trustProxy(env.QUIRE_TRUST_PROXY),
    texlive: texliveSettings(env),
    sandbox: flag(env, 'QUIRE_SANDBOX', true),
    // One slot more than cores: a slot spends part of each job starting its next sandbox and
    // engine, and the extra slot's TeX fills that gap (docs/performance.md, throughput).
    compileConcurrency: integer(env, 'QUIRE_COMPILE_CONCURRENCY', cores + 1, 1, 256),
    compileQueueLimit: integer(env, 'QUIRE_COMPILE_QUEUE', cores * 8, 0, 100_000),
    // A second of waiting plus the job itself keeps the answers' p99 near two seconds; past it a
    // caller is better told when to come back (Retry-After) than kept waiting.
    compileQueueWaitMs: integer(env, 'QUIRE_COMPILE_QUEUE_WAIT_MS', 1000, 0, 600_000),
    bodyLimit: integer(env, 'QUIRE_BODY_LIMIT', 110 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    graceFraction: fraction(env, 'QUIRE_GRACE_FRACTION', 0.1),
    anonymousHourlyCeiling: integer(env, 'QUIRE_ANON_HOURLY_CEILING', 1000, 0, 10_000_000),
    failureWindowSeconds: integer(env, 'QUIRE_FAILURE_WINDOW_SECONDS', 600, 10, 86_400),
    failureBudgetFactor: fraction(env, 'QUIRE_FAILURE_BUDGET_FACTOR', 1),
    callerConcurrencyFactor: fraction(env, 'QUIRE_CALLER_CONCURRENCY_FACTOR', 1),
    nodeHeartbeatTimeoutSeconds: integer(env, 'QUIRE_NODE_HEARTBEAT_TIMEOUT_SECONDS', 30, 3, 3600),
    nodeName: env.QUIRE_NODE_NAME || `${hostname()}:${dataDir}`,
    workerPort: integer(env, 'QUIRE_WORKER_PORT', 9090, 0, 65535),
    renderPerMinute: integer(env, 'QUIRE_RENDER_PER_MINUTE', 60, 1, 1_000_000),
    validatePerMinute: integer(env, 'QUIRE_VALIDATE_PER_MINUTE', 30, 1, 1_000_000),
    pdfCheckMaxBytes: integer(env, 'QUIRE_PDF_CHECK_MAX_MB', 20, 1, 1024) * 1024 * 1024,
    previews: flag(env, 'QUIRE_PREVIEWS', true),
    resultCacheEntries: integer(env, 'QUIRE_RESULT_CACHE_ENTRIES', 256, 0, 1_000_000),
    resultCacheBytes: integer(env, 'QUIRE_RESULT_CACHE_MB', 128, 0, 1_000_000) * 1024 * 1024,
    preambleCacheBytes: integer(env, 'QUIRE_PREAMBLE_CACHE_MB', 256, 0, 1_000_000) * 1024 * 1024,
    pausedPreambles: integer(env, 'QUIRE_PAUSED_PREAMBLES', 4, 0, 256),
    primedFormats: integer(env, 'QUIRE_PRIMED_FORMATS', 4, 0, 256),
    pausedPreambleBytes: integer(env, 'QUIRE_PAUSED_PREAMBLE_MB', 1024, 0, 1_000_000) * 1024 * 1024,
    warmValidators: integer(env, 'QUIRE_WARM_VALIDATORS', 1, 0, 16),
    // Off by default: under a saturating load a demoted job can wait out its timeout (docs/fair-use.md).
    demoteAfterMs: integer(env, 'QUIRE_DEMOTE_AFTER_MS', 0, 0, 3_600_000),
    texIndexDir: texIndexDir(env),
    probes: probeSettings(env),
    signup,
    mcpAllowedOrigins: mcpOrigins(env.QUIRE_MCP_ALLOWED_ORIGINS, baseUrl),
    logLevel: env.LOG_LEVEL || 'info',
    webhookAllowHttp: flag(env, 'QUIRE_WEBHOOK_ALLOW_HTTP', false),
    webhookAllowPrivate: flag(env, 'QUIRE_WEBHOOK_ALLOW_PRIVATE', false),
    tsaUrl: tsaUrl(env.QUIRE_TSA_URL),
    tsaAllowPrivate: flag(env, 'QUIRE_TSA_ALLOW_PRIVATE', false),
  };
}

/** QUIRE_TSA_URL: an http(s) URL without credentials, or none (no timestamps). Its addresses are checked at each request (src/signing/tsa.ts). */
function tsaUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('QUIRE_TSA_URL must be an absolute http(s) URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) throw new ConfigError('QUIRE_TSA_URL must be an http(s) URL without credentials');
  return url.toString();
}

/** What `quire mcp` (the stdio MCP server, src/cli/mcp-stdio.ts) reads: the Quire server it forwards to. */
export interface McpProxyConfig {
  /** The server's /mcp endpoint. */
  endpoint: URL;
  apiKey: string | undefined;
  /** Longest wait for one answer, headers and body: a compile's timeout plus its time in the queue. */
  timeoutMs: number;
  /** Longest message (stdin line) forwarded; the server's own default body limit. */
  maxMessageBytes: number;
}

export function loadMcpProxyConfig(env: Env = process.env): McpProxyConfig {
  const raw = env.QUIRE_URL || 'http://localhost:8080';
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new ConfigError(`QUIRE_URL must be an http(s) URL, got "${raw}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigError(`QUIRE_URL must be an http(s) URL, got "${raw}"`);
  const endpoint = new URL(base.pathname.replace(/\/*$/, '') + '/mcp', base);
  return {
    endpoint,
    apiKey: env.QUIRE_API_KEY?.trim() || undefined,
    timeoutMs: integer(env, 'QUIRE_MCP_TIMEOUT_SECONDS', 300, 1, 3600) * 1000,
    maxMessageBytes: integer(env, 'QUIRE_MCP_MAX_MESSAGE_MB', 110, 1, 1024) * 1024 * 1024,
  };
}
