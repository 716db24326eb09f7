// One MCP tools/call through the app's /mcp endpoint (app.inject), for tests that check a tool
// next to its HTTP route.
import assert from 'node:assert/strict';
import type { App } from '../../src/http/types.js';

export interface ToolCallResult {
  isError?: boolean;
  structuredContent: Record<string, unknown> & { error?: string };
  content: Array<{ type: string; text?: string }>;
}

export async function callTool(app: App, headers: Record<string, string>, name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { result?: ToolCallResult; error?: unknown };
  assert.ok(body.result, res.body);
  return body.result;
}
