// Browsers may call the API and /mcp from any origin: credentials travel only in the
// Authorization or X-API-Key header, never in cookies, so a wildcard origin grants nothing
// a page could not already do with the key it holds.
import { notFoundHandler } from './errors.js';
import type { App } from './types.js';

const CORS_PATHS = /^\/(api\/|mcp(\?|$))/;
const HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': 'Authorization, X-API-Key, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id',
  'access-control-expose-headers': 'Retry-After, X-Request-Id, Content-Length, Content-Range, Accept-Ranges',
  'access-control-max-age': '86400',
};

export function installCors(app: App): void {
  app.addHook('onRequest', async (req, reply) => {
    if (req.headers.origin !== undefined && CORS_PATHS.test(req.url)) void reply.headers(HEADERS);
  });
  // Preflight: answered before auth, body parsing or routing to the real method.
  app.options('/*', { schema: { hide: true } }, async (req, reply) => {
    if (!CORS_PATHS.test(req.url)) return notFoundHandler(req, reply);
    return reply.code(204).headers(HEADERS).send();
  });
}
