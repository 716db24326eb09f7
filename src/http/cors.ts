// Browsers may call the API from any origin: credentials travel only in the Authorization or
// X-API-Key header, never in cookies, so a wildcard origin grants nothing a page could not
// already do with the key it holds. /mcp is stricter: only the origins its Origin rule allows
// (origins.ts) get CORS headers, and their preflight alone succeeds.
import type { Config } from '../config.js';
import { notFoundHandler } from './errors.js';
import { allowsAnyOrigin, checkMcpOrigin, mcpOriginAllowed } from './origins.js';
import type { App } from './types.js';

const CORS_PATHS = /^\/(api\/|mcp(\?|$))/;
const MCP_PATH = /^\/mcp(\?|$)/;
const HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': 'Authorization, X-API-Key, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id',
  'access-control-expose-headers': 'Retry-After, X-Request-Id, Content-Length, Content-Range, Accept-Ranges',
  'access-control-max-age': '86400',
};

export function installCors(app: App, config: Config): void {
  const mcpHeaders = (origin: string) =>
    allowsAnyOrigin(config) ? HEADERS : { ...HEADERS, 'access-control-allow-origin': origin, vary: 'Origin' };

  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (origin === undefined || !CORS_PATHS.test(req.url)) return;
    if (!MCP_PATH.test(req.url)) void reply.headers(HEADERS);
    else if (mcpOriginAllowed(config, origin)) void reply.headers(mcpHeaders(origin));
  });
  // Preflight: answered before auth, body parsing or routing to the real method.
  app.options('/*', { schema: { hide: true } }, async (req, reply) => {
    if (!CORS_PATHS.test(req.url)) return notFoundHandler(req, reply);
    const origin = req.headers.origin;
    if (!MCP_PATH.test(req.url)) return reply.code(204).headers(HEADERS).send();
    checkMcpOrigin(config, origin);
    return reply.code(204).headers(origin === undefined ? HEADERS : mcpHeaders(origin)).send();
  });
}
