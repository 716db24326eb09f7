// The MCP server assembled from the service layer: every tool calls the same service function
// as its HTTP route.
import type { Services } from '../services.js';
import type { RpcEndpoint } from '../wire/rpc-endpoint.js';
import { handleBody } from './jsonrpc.js';
import { Prompts } from './prompts.js';
import { ToolRegistry } from './registry.js';
import { Resources } from './resources.js';
import { McpServer } from './server.js';
import type { Tool } from './tool.js';
import { assetTools } from './tools/assets.js';
import { compileTool } from './tools/compile.js';
import { galleryTools } from './tools/gallery.js';
import { getJobTool, withJobs } from './tools/jobs.js';
import { templateVersionTools } from './tools/template-versions.js';
import { templateTools } from './tools/templates.js';
import { signingTools } from './tools/signing.js';
import { usageTool } from './tools/usage.js';
import { validateTool } from './tools/validate.js';
import { checkPdfTool } from './tools/check-pdf.js';

export function mcpTools(): Tool[] {
  return [...[compileTool, validateTool, checkPdfTool, ...galleryTools, ...templateTools, ...templateVersionTools, usageTool, ...assetTools, ...signingTools].map(withJobs), getJobTool];
}

export function createMcpServer(services: Services, version: string): McpServer {
  return new McpServer(
    services,
    version,
    new ToolRegistry(services, mcpTools()),
    new Resources(services.gallery),
    new Prompts(),
  );
}

/** The MCP server as the HTTP door sees it: a body in, a JSON-RPC reply out. */
export function mcpEndpoint(services: Services, version: string): RpcEndpoint {
  const server = createMcpServer(services, version);
  return { answer: (raw, caller, onInternal) => handleBody(raw, server.dispatcher(caller), onInternal) };
}
