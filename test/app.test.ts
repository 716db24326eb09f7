// The app assembly (src/app.ts): the HTTP door alone has no /mcp; the assembled app mounts the
// MCP door there, answering JSON-RPC and listing /mcp in the OpenAPI document beside the
// HTTP routes. No TeX runs here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildHttpApp } from '../src/http/app.js';
import { testApp, type TestApp } from './helpers.js';

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('app assembly', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  test('the assembled app answers /mcp and documents it with the HTTP routes', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: ping });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 1, result: {} });
    const paths = Object.keys((t.app.swagger() as { paths: Record<string, unknown> }).paths);
    assert.ok(paths.includes('/mcp'), 'OpenAPI lists /mcp');
    assert.ok(paths.includes('/api/v1/compile'), 'OpenAPI lists the HTTP routes');
  });

  test('the HTTP door alone has no /mcp: 404 not_found', async () => {
    const http = await buildHttpApp(t.services);
    try {
      await http.ready();
      const res = await http.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: ping });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { error: 'not_found', message: 'No route for POST /mcp' });
      assert.equal((await http.inject({ url: '/health' })).statusCode, 200);
    } finally {
      await http.close();
    }
  });
});
