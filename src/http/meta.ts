// Health, metrics and the API description.
import { Type } from '@sinclair/typebox';
import { pingDb } from '../storage/db.js';
import { pricingPage } from './pages/pricing.js';
import type { Services } from '../services.js';
import { API_VERSION } from '../version.js';
import type { App } from './types.js';

async function check(probe: () => Promise<void>): Promise<{ ok: boolean; error?: string }> {
  try {
    await probe();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

const Check = Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) });
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  database: Type.Intersect([Check, Type.Object({ dialect: Type.String() })]),
  blob_store: Check,
  engines: Type.Record(
    Type.String(),
    Type.Object({ available: Type.Boolean(), version: Type.Optional(Type.String()), error: Type.Optional(Type.String()) }),
  ),
  sandbox: Type.Boolean(),
});

export function metaRoutes(app: App, services: Services): void {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Service health: database, blob store and each TeX engine',
        tags: ['meta'],
        response: { 200: Health, 503: Health },
      },
    },
    async (_req, reply) => {
      const [database, blobStore] = await Promise.all([
        check(() => pingDb(services.db)),
        check(() => services.blobs.ping()),
      ]);
      const enginesUp = Object.values(services.engines).every((e) => e.available);
      const ok = database.ok && blobStore.ok && enginesUp;
      return reply.code(ok ? 200 : 503).send({
        status: ok ? 'ok' : 'degraded',
        version: API_VERSION,
        database: { ...database, dialect: services.db.dialect },
        blob_store: blobStore,
        engines: services.engines,
        sandbox: services.config.sandbox,
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
