// The application as served: the HTTP door with the MCP door mounted at /mcp. The two doors
// never import each other; this assembly is the one place that knows both.
import { buildHttpApp } from './http/app.js';
import type { App } from './http/types.js';
import { mcpEndpoint } from './mcp/index.js';
import type { Services } from './services.js';
import { API_VERSION } from './version.js';

export async function buildApp(services: Services): Promise<App> {
  return buildHttpApp(services, { mcp: mcpEndpoint(services, API_VERSION) });
}
