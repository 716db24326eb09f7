// The browser side: the studio, sign-up and dashboard pages, and the bundles under /build/
// (written by scripts/build-web.mjs with content hashes, so they are cached for good).
import { errors } from '../errors.js';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { FastifyReply } from 'fastify';
import { anonymousDailyKey } from '../quota/keys.js';
import { limitsOf } from '../quota/plans.js';
import { projectRoot } from '../project-root.js';
import type { Services } from '../services.js';
import { dashboardPage, signupPage, studioPage, unbuiltPage, type WebManifest } from './pages/studio-pages.js';
import type { App } from './types.js';

export const BUILD_DIR = join(projectRoot(), 'public', 'build');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

const SAFE_PATH = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*(\.[A-Za-z0-9_-]+)+$/;

function contentSecurityPolicy(baseUrl: string): string {
  const origin = new URL(baseUrl).origin;
  return [
    "default-src 'self'",
    "script-src 'self'",
    // CodeMirror themes itself with generated <style> rules.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "worker-src 'self' blob:",
    `connect-src 'self' ${origin}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function loadManifest(): WebManifest | null {
  try {
    return JSON.parse(readFileSync(join(BUILD_DIR, 'manifest.json'), 'utf8')) as WebManifest;
  } catch {
    return null;
  }
}

export function webRoutes(app: App, services: Services): void {
  let manifest = loadManifest();
  const csp = contentSecurityPolicy(services.config.baseUrl);

  const page = (reply: FastifyReply, render: (m: WebManifest) => string) => {
    manifest ??= loadManifest();
    void reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
    if (!manifest) return reply.code(503).send(unbuiltPage());
    return reply.send(render(manifest));
  };

  app.get('/studio', { schema: { hide: true } }, async (req, reply) => {
    const limit = limitsOf('anonymous').compilesPerPeriod;
    const { used, reserved } = await services.counters.get(anonymousDailyKey(req.ip, services.clock.now()));
    const remaining = Math.max(0, limit - used - reserved);
    return page(reply, (m) => studioPage(m, { anonLimit: limit, anonRemaining: remaining, texlive: services.images.map((image) => image.year) }));
  });

  app.get('/signup', { schema: { hide: true } }, async (_req, reply) =>
    page(reply, (m) => signupPage(m, services.signup.open)),
  );

  app.get('/dashboard', { schema: { hide: true } }, async (_req, reply) => page(reply, dashboardPage));

  app.get<{ Params: { '*': string } }>('/build/*', { schema: { hide: true } }, async (req, reply) => {
    const path = req.params['*'];
    const type = CONTENT_TYPES[extname(path)];
    if (!SAFE_PATH.test(path) || !type) return notFound(path);
    const accepts = String(req.headers['accept-encoding'] ?? '');
    // The build writes .br and .gz twins of every text file; send the smallest one accepted.
    for (const [encoding, suffix] of [['br', '.br'], ['gzip', '.gz'], [null, '']] as const) {
      if (encoding && !new RegExp(`\\b${encoding}\\b`).test(accepts)) continue;
      let body: Buffer;
      try {
        body = await readFile(join(BUILD_DIR, path + suffix));
      } catch {
        continue;
      }
      if (encoding) void reply.header('content-encoding', encoding);
      // manifest.json names the current files, so it must not be cached; the rest is hashed.
      const cache = path === 'manifest.json' ? 'no-cache' : 'public, max-age=31536000, immutable';
      return reply
        .type(type)
        .header('cache-control', cache)
        .header('vary', 'accept-encoding')
        .header('x-content-type-options', 'nosniff')
        .send(body);
    }
    return notFound(path);
  });
}

function notFound(path: string): never {
  throw errors.not_found(`No file /build/${path}`);
}
