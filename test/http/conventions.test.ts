import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { testServices, type TestServices } from '../helpers.js';

describe('HTTP conventions', () => {
  let services: TestServices;
  let app: App;
  before(async () => {
    services = await testServices({ env: { QUIRE_BODY_LIMIT: '2048' } });
    app = await buildApp(services);
    // A route with a schema, to see how violations are reported.
    app.post(
      '/test/echo',
      { schema: { body: Type.Object({ name: Type.String({ maxLength: 5 }), count: Type.Integer({ minimum: 1 }) }) } },
      async (req) => req.body,
    );
    await app.ready();
  });
  after(async () => {
    await app.close();
    await services.cleanup();
  });

  test('unknown route: 404 not_found', async () => {
    const res = await app.inject({ url: '/nope?x=1' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: 'not_found', message: 'No route for GET /nope' });
  });

  test('malformed JSON: 400 invalid_json', async () => {
    const res = await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: '{"name": ' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_json');
  });

  test('schema violations: 422 validation_failed naming each field, rule and limit', async () => {
    const res = await app.inject({ method: 'POST', url: '/test/echo', payload: { name: 'toolong', count: 0, extra: 1 } });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.error, 'validation_failed');
    assert.deepEqual(
      body.fields.map((f: { field: string; rule: string; limit?: number }) => [f.field, f.rule, f.limit]),
      [
        ['name', 'maxLength', 5],
        ['count', 'minimum', 1],
      ],
    );
    const missing = await app.inject({ method: 'POST', url: '/test/echo', payload: {} });
    assert.deepEqual(missing.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [
      ['name', 'required'],
      ['count', 'required'],
    ]);
  });

  test('body over the hard cap: 413 JSON', async () => {
    const res = await app.inject({ method: 'POST', url: '/test/echo', payload: { name: 'x'.repeat(5000), count: 1 } });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().error, 'payload_too_large');
  });

  test('every response carries a request id', async () => {
    const res = await app.inject({ url: '/health' });
    assert.match(res.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
  });

  test('CORS: the API answers preflights from any origin; /mcp only from the origins its Origin rule allows', async () => {
    const pre = await app.inject({ method: 'OPTIONS', url: '/api/v1/compile', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.statusCode, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(pre.headers['access-control-allow-headers'] as string, /Authorization, X-API-Key/);
    const own = await app.inject({ method: 'OPTIONS', url: '/mcp', headers: { origin: 'http://quire.test', 'access-control-request-method': 'POST' } });
    assert.equal(own.statusCode, 204);
    assert.equal(own.headers['access-control-allow-origin'], 'http://quire.test');
    assert.equal(own.headers.vary, 'Origin');
    assert.match(own.headers['access-control-allow-headers'] as string, /Authorization, X-API-Key, Content-Type, Accept, Mcp-Protocol-Version/);
    const foreign = await app.inject({ method: 'OPTIONS', url: '/mcp', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().error, 'origin_not_allowed');
    assert.equal(foreign.headers['access-control-allow-origin'], undefined, 'a browser cannot go on to the POST');
    const withOrigin = await app.inject({ url: '/api/v1/usage', headers: { origin: 'https://agent.example' } });
    assert.equal(withOrigin.statusCode, 401);
    assert.equal(withOrigin.headers['access-control-allow-origin'], '*', 'errors are readable cross-origin too');
    const page = await app.inject({ url: '/health', headers: { origin: 'https://agent.example' } });
    assert.equal(page.headers['access-control-allow-origin'], undefined, 'only the API and /mcp');
    const elsewhere = await app.inject({ method: 'OPTIONS', url: '/health' });
    assert.equal(elsewhere.statusCode, 404);
  });
});
