// The app assembly (src/app.ts) and the seam it fills: the assembled app answers /mcp with the
// MCP server and documents it beside the HTTP routes; the HTTP door hands /mcp's raw body and
// caller to whatever RpcEndpoint it is given, and sends back its answer. No TeX runs here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildHttpApp } from '../src/http/app.js';
import type { RpcCaller } from '../src/wire/rpc-endpoint.js';
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

  test('the HTTP door carries the raw body and caller to the endpoint it is given', async () => {
    const seen: Array<{ raw: string | undefined; caller: RpcCaller }> = [];
    const http = await buildHttpApp(t.services, {
      mcp: {
        async answer(raw, caller) {
          seen.push({ raw, caller });
          return raw === '[]' ? undefined : { jsonrpc: '2.0', id: 9, result: { echoed: raw } };
        },
      },
    });
    try {
      await http.ready();
      const res = await http.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'text/plain', 'x-probe': 'yes' }, payload: 'not json' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 9, result: { echoed: 'not json' } });
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.raw, 'not json');
      assert.equal(seen[0]!.caller.headers['x-probe'], 'yes');
      assert.equal(seen[0]!.caller.ip, '127.0.0.1');
      const nothingOwed = await http.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: '[]' });
      assert.equal(nothingOwed.statusCode, 202);
      assert.equal(nothingOwed.body, '');
    } finally {
      await http.close();
    }
  });
});
