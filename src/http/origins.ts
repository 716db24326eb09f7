// The Origin rule of /mcp (MCP Streamable HTTP: a server checks Origin so that a web page
// reached through DNS rebinding cannot drive it). A request without Origin (an agent, curl)
// passes; a browser's Origin must be on QUIRE_MCP_ALLOWED_ORIGINS, by default the base URL's.
import type { Config } from '../config.js';
import { errors } from '../errors.js';

type Origins = Pick<Config, 'mcpAllowedOrigins'>;

function normalized(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.origin === 'null' ? null : url.origin;
  } catch {
    return null; // "null" (sandboxed frames, file:) and anything unparsable
  }
}

export function allowsAnyOrigin(config: Origins): boolean {
  return config.mcpAllowedOrigins.includes('*');
}

export function mcpOriginAllowed(config: Origins, origin: string): boolean {
  if (allowsAnyOrigin(config)) return true;
  const given = normalized(origin);
  return given !== null && config.mcpAllowedOrigins.includes(given);
}

/** Throws 403 origin_not_allowed when `origin` is present and not allowed. */
export function checkMcpOrigin(config: Origins, origin: string | undefined): void {
  if (origin === undefined || mcpOriginAllowed(config, origin)) return;
  const shown = origin.length > 200 ? `${origin.slice(0, 200)}…` : origin;
  throw errors.origin_not_allowed(
    `Browser pages from ${JSON.stringify(shown)} may not call /mcp. The operator can allow an origin with QUIRE_MCP_ALLOWED_ORIGINS.`,
    { origin: shown },
  );
}
