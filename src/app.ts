// The app every server and test runs: the HTTP door with the MCP door mounted at /mcp. The one
// place the two doors meet, so neither imports the other.
import { buildHttpApp } from './http/app.js';
import { mcpRoutes } from './mcp/route.js';
import type { Services } from './services.js';
import type { App } from './wire/types.js';

export function buildApp(services: Services): Promise<App> {
  return buildHttpApp(services, [mcpRoutes]);
}
