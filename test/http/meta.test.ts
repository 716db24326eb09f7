import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { LocalBlobStore } from '../../src/storage/blobs.js';
import { testApp, type TestApp } from '../helpers.js';

describe('health, metrics and API description', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  test('health reports database, blob store, queue and all three engines', async () => {
    const res = await t.app.inject({ url: '/health' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'ok');
    assert.deepEqual(body.database, { ok: true, dialect: 'sqlite' });
    assert.deepEqual(body.blob_store, { ok: true });
    assert.deepEqual(body.queue, { ok: true, running: 0, waiting: 0 });
    assert.equal(body.redis, undefined, 'no Redis configured, none reported');
    for (const engine of ['pdflatex', 'xelatex', 'lualatex']) {
      assert.equal(body.engines[engine].available, true, engine);
      assert.match(body.engines[engine].version, /TeX/);
    }
  });

  test('OpenAPI 3.1 document is valid and declares version 1.5.0', async () => {
    const res = await t.app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.5.0');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.ok(doc.paths['/api/v1/usage'].get);
    assert.ok(!doc.paths['/metrics'], 'internal routes stay out of the document');
  });

  test('OpenAPI documents the promote body and GET /mcp → 405 with Allow: POST', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const promote = doc.paths['/api/v2/templates/{id}/promote'].post;
    const body = promote.requestBody.content['application/json'].schema;
    assert.equal(body.type, 'object');
    assert.deepEqual(Object.keys(body.properties), ['latex_with_placeholders']);
    assert.equal(body.properties.latex_with_placeholders.type, 'string');
    assert.equal(body.required, undefined, 'latex_with_placeholders is optional');
    assert.notEqual(promote.requestBody.required, true, 'the body itself is optional');

    const getMcp = doc.paths['/mcp'].get;
    assert.deepEqual(Object.keys(getMcp.responses).filter((status) => status.startsWith('2')), [], 'no 2XX: GET /mcp never succeeds');
    assert.deepEqual(getMcp.responses['405'].headers.Allow.schema, { const: 'POST', type: 'string' });
    assert.deepEqual(getMcp.responses['405'].content['application/json'].schema.properties.error.enum, ['method_not_allowed']);
    // What the document says is what the route does.
    const res = await t.app.inject({ method: 'GET', url: '/mcp' });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'POST');
    assert.equal(res.json().error, 'method_not_allowed');
  });

  test('the root maps the service for programs and sends browsers to the gallery', async () => {
    const json = await t.app.inject({ url: '/' });
    assert.equal(json.statusCode, 200);
    assert.equal(json.json().compile, 'http://quire.test/api/v1/compile');
    assert.equal(json.json().version, '1.5.0');
    const html = await t.app.inject({ url: '/', headers: { accept: 'text/html,*/*' } });
    assert.equal(html.statusCode, 302);
    assert.equal(html.headers.location, '/gallery');
  });

  test('every upgrade_url leads to a pricing page drawn from the plan table', async () => {
    const res = await t.app.inject({ url: '/pricing' });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/html/);
    assert.match(res.body, /<td>50 per month<\/td><td>500 per month<\/td><td>2,000 per month<\/td><td>10,000 per month<\/td>/);
    assert.match(res.body, /<td>3 per day<\/td>/);
  });

  test('API docs are served at /docs', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /swagger/i);
  });

  test('metrics are Prometheus text and count requests', async () => {
    await t.app.inject({ url: '/health' });
    const res = await t.app.inject({ url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/plain/);
    assert.match(res.body, /quire_http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
  });

  test('metrics include the process metrics of the service', async () => {
    const res = await t.app.inject({ url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /^quire_process_resident_memory_bytes \d+/m);
    assert.match(res.body, /^quire_process_cpu_seconds_total \d/m);
    assert.match(res.body, /^quire_nodejs_eventloop_lag_seconds \d/m);
    assert.match(res.body, /^quire_nodejs_heap_size_used_bytes \d+/m);
  });
});

describe('health when a part is down', () => {
  test('503 when the blob store cannot be written', async () => {
    class BrokenStore extends LocalBlobStore {
      override async ping(): Promise<void> {
        throw new Error('disk full');
      }
    }
    const t = await testApp({ overrides: { blobs: new BrokenStore('/nonexistent') } });
    try {
      const res = await t.app.inject({ url: '/health' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().status, 'degraded');
      assert.deepEqual(res.json().blob_store, { ok: false, error: 'disk full' });
    } finally {
      await t.close();
    }
  });

  test('503 when an engine is missing', async () => {
    const t = await testApp({
      overrides: {
        engines: { pdflatex: { available: true }, xelatex: { available: true }, lualatex: { available: false, error: 'not found' } },
      },
    });
    try {
      const res = await t.app.inject({ url: '/health' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().engines.lualatex.available, false);
    } finally {
      await t.close();
    }
  });
});
