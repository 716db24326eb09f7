// Health, metrics and the API description.
import { Type } from '@sinclair/typebox';
import { pingDb } from '../storage/db.js';
import { pricingPage } from './pages/pricing.js';
import type { Services } from '../services.js';
import { API_VERSION } from '../version.js';
import type { App } from './types.js';

/** A probe that does not answer within this is reported down (health must answer promptly). */
const PROBE_TIMEOUT_MS = 3000;

async function check(probe: () => Promise<void>): Promise<{ ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return { ok: true };
  } catch (err) {
    // The driver's own words (the cause of a *_unavailable error) tell an operator most.
    const cause = (err as Error).cause;
    return { ok: false, error: cause instanceof Error && cause.message ? cause.message : (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

const Check = Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) });
const Queue = Type.Intersect([Check, Type.Object({ running: Type.Integer(), waiting: Type.Integer() })]);
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  database: Type.Intersect([Check, Type.Object({ dialect: Type.String() })]),
  blob_store: Check,
  /** Present when QUIRE_REDIS_URL is set. */
  redis: Type.Optional(Check),
  queue: Queue,
  engines: Type.Record(
    Type.String(),
    Type.Object({ available: Type.Boolean(), version: Type.Optional(Type.String()), error: Type.Optional(Type.String()) }),
  ),
  sandbox: Type.Boolean(),
  /** Extension: the TeX images served, newest (the default) first; empty with QUIRE_SANDBOX=off. */
  texlive: Type.Array(
    Type.Object({
      year: Type.String(),
      default: Type.Boolean(),
      debian: Type.String({ description: 'Debian release and TeX Live package version' }),
      engines: Type.Record(Type.String(), Type.String()),
      disk_bytes: Type.Integer(),
    }),
  ),
});

export function metaRoutes(app: App, services: Services): void {
  app.get(
    '/health',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Service health: database, Redis, blob store, compile queue and each TeX engine',
        tags: ['meta'],
        response: { 200: Health, 503: Health },
      },
    },
    async (_req, reply) => {
      const { counters, texQueue } = services;
      const redisProbe = services.config.redisUrl && counters.ping ? () => counters.ping!() : null;
      const [database, blobStore, redis, queue] = await Promise.all([
        check(() => pingDb(services.db)),
        check(() => services.blobs.ping()),
        redisProbe ? check(redisProbe) : Promise.resolve(null),
        check(async () => texQueue.ping?.()),
      ]);
      const enginesUp = Object.values(services.engines).every((e) => e.available);
      const ok = database.ok && blobStore.ok && (redis?.ok ?? true) && queue.ok && enginesUp;
      return reply.code(ok ? 200 : 503).send({
        status: ok ? 'ok' : 'degraded',
        version: API_VERSION,
        database: { ...database, dialect: services.db.dialect },
        blob_store: blobStore,
        ...(redis ? { redis } : {}),
        queue: { ...queue, ...texQueue.stats() },
        engines: services.engines,
        sandbox: services.config.sandbox,
        texlive: services.images.map((image, i) => ({
          year: image.year,
          default: i === 0,
          debian: `${image.suite} ${image.texliveVersion}`,
          engines: image.engines,
          disk_bytes: image.bytes,
        })),
      });
    },
  );

  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    // Browsers land on the gallery; curl and programs get a map of the service.
    if (req.headers.accept?.includes('text/html')) return reply.redirect('/gallery');
    const base = services.config.baseUrl;
    return {
      name: 'Quire',
      version: API_VERSION,
      compile: `${base}/api/v1/compile`,
      docs: `${base}/docs`,
      openapi: `${base}/openapi.json`,
      gallery: `${base}/gallery`,
      studio: `${base}/studio`,
      mcp: `${base}/mcp`,
      health: `${base}/health`,
    };
  });

  app.get('/pricing', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=300').send(pricingPage(services.config.baseUrl)),
  );

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const body = await services.metrics.registry.metrics();
    return reply.type(services.metrics.registry.contentType).send(body);
  });

  app.get('/openapi.json', { schema: { hide: true } }, async (_req, reply) => {
    return reply.type('application/json').send(app.swagger());
  });
}
