// Attacks on the HTTP and MCP edge (issue 13, items 3, 6 and 8): JSON nested 100,000 deep, NUL
// bytes in every kind of field and path segment on SQLite and PostgreSQL, traversal under
// /docs/static against a canary file, requests Node or Fastify refuse themselves (bad escapes,
// long URLs, huge headers) and the /mcp Origin rule. Each answer is a catalogue error, never a 500.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { inspectJson, MAX_JSON_DEPTH } from '../../src/wire/json-safety.js';
import { MAX_URL_LENGTH } from '../../src/http/hardening.js';
import { deriveSchema, MAX_DATA_DEPTH } from '../../src/templates/schema.js';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const arrays = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);
const objects = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);
const V2_SOURCE = '\\documentclass{article}\n\\begin{document}\nHello, {{ who }}.\n\\end{document}\n';

function rpc(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
}

/** A tools/call body whose `arguments` is the raw JSON text given (it may be too deep to build as a value). */
function toolCall(name: string, rawArguments: string): string {
  return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${rawArguments}}}`;
}

/** Sends raw bytes to a listening server and returns status line, headers and body. */
function rawHttp(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (data ? finish() : reject(err)));
    socket.on('close', finish);
    function finish() {
      const split = data.indexOf('\r\n\r\n');
      const head = data.slice(0, split);
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: data.slice(split + 4) });
    }
  });
}

describe('edge: JSON nested 100,000 deep is 400 json_too_deep, and the process lives', () => {
  let t: TestApp;
  let pro: TestAccount;
  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'greeting', latex_with_placeholders: V2_SOURCE } });
    assert.equal(created.statusCode, 201);
  });
  after(() => t.close());

  const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });

  test('compile, V2 render data and public render data', async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['/api/v1/compile', `{"latex":${arrays(100_000)}}`, {}],
      ['/api/v1/compile', `{"latex":"x","compiler":${objects(100_000)}}`, pro.headers],
      ['/api/v2/templates/greeting/render', `{"data":{"who":${arrays(100_000)}}}`, pro.headers],
      ['/api/v2/templates/greeting/render', `{"data":{"who":"x","extra":${objects(100_000)}}}`, pro.headers],
      ['/api/v1/public_templates/any/render', `{"data":${objects(100_000)}}`, {}],
      ['/api/v1/templates', `{"name":"n","latex_content":"x","description":${arrays(100_000)}}`, pro.headers],
    ];
    for (const [url, body, headers] of cases) {
      const res = await post(url, body, headers);
      assert.equal(res.statusCode, 400, url);
      assert.deepEqual(res.json(), {
        error: 'json_too_deep',
        message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; send flatter JSON.`,
        limit: MAX_JSON_DEPTH,
      });
    }
    const usage = await t.app.inject({ url: '/api/v1/usage', headers: pro.headers });
    assert.equal(usage.json().usage.used_this_month, 0, 'nothing charged');
    const health = await t.app.inject({ url: '/health' });
    assert.equal(health.statusCode, 200, 'the process is alive and answering');
  });

  test('the cap is exactly 64 levels: 64 reach validation, 65 do not', async () => {
    const atCap = await post('/api/v1/signup', `{"email":"a@b.example","x":${arrays(MAX_JSON_DEPTH - 1)}}`);
    assert.equal(atCap.statusCode, 422);
    assert.equal(atCap.json().error, 'validation_failed');
    const over = await post('/api/v1/signup', `{"email":"a@b.example","x":${arrays(MAX_JSON_DEPTH)}}`);
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().error, 'json_too_deep');
  });

  test('MCP tools/call: deep arguments are a json_too_deep tool error, not an internal error', async () => {
    const calls: Array<[string, string]> = [
      ['compile', `{"latex":${arrays(100_000)}}`],
      ['render', `{"id":"greeting","data":{"who":${objects(100_000)}}}`],
      ['render_public_template', `{"slug":"any","data":${arrays(100_000)}}`],
    ];
    for (const [name, args] of calls) {
      const res = await post('/mcp', toolCall(name, args), pro.headers);
      assert.equal(res.statusCode, 200, name);
      const reply = res.json();
      assert.equal(reply.id, 7);
      assert.equal(reply.result.isError, true, name);
      assert.deepEqual(reply.result.structuredContent, {
        error: 'json_too_deep',
        message: `The arguments object nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; send flatter JSON.`,
        limit: MAX_JSON_DEPTH,
      });
    }
    // Other methods: a JSON-RPC invalid-params error carrying the catalogue body.
    const prompt = await post('/mcp', `{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":${arrays(100_000)}}}`);
    assert.equal(prompt.statusCode, 200);
    const { error } = prompt.json();
    assert.equal(error.code, -32602);
    assert.equal(error.data.error, 'json_too_deep');
    assert.equal(error.data.limit, MAX_JSON_DEPTH);
    const nul = await post('/mcp', rpc('resources/read', { uri: 'quire://templates/a\0' }));
    assert.equal(nul.json().error.code, -32602);
    assert.equal(nul.json().error.data.error, 'validation_failed');
    const health = await t.app.inject({ url: '/health' });
    assert.equal(health.statusCode, 200);
  });

  test('schema derivation: a path too deep to render is refused, the deepest allowed renders, samples stay small', async () => {
    assert.equal(MAX_DATA_DEPTH, MAX_JSON_DEPTH - 1, 'data sits one level inside the request body');
    for (const source of [`{{ ${'a.'.repeat(20_000)}b }}`, `{{ x${'[0]'.repeat(MAX_DATA_DEPTH)} }}`]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'deep', latex_with_placeholders: V2_SOURCE.replace('{{ who }}', source) } });
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error, 'liquid_syntax_error');
      assert.equal(res.json().limit, MAX_DATA_DEPTH);
    }
    // The deepest path accepted derives sample data that passes the edge.
    const deepest = deriveSchema(`{{ x${'[0]'.repeat(MAX_DATA_DEPTH - 1)} }}`);
    assert.equal(inspectJson({ data: deepest.sample_data }), null);
    // Nested arrays used to double the sample at every level (2^30 values for 30 levels).
    const started = performance.now();
    const wide = deriveSchema(`{{ x${'[0]'.repeat(30)} }}`);
    assert.ok(JSON.stringify(wide.sample_data).length < 1000);
    assert.ok(performance.now() - started < 1000);
  });

  test('the inspector itself is iterative: a million levels cost no stack', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 1_000_000; i++) value = [value];
    assert.deepEqual(inspectJson(value), { kind: 'too_deep' });
    assert.deepEqual(inspectJson(value, 2_000_000), null);
    assert.deepEqual(inspectJson({ a: [1, { b: 'x\0y' }] }), { kind: 'nul', path: ['a', 1, 'b'], inKey: false, text: 'x\0y' });
    assert.deepEqual(inspectJson({ a: { 'k\0': 1 } }), { kind: 'nul', path: ['a', 'k\0'], inKey: true, text: 'k\0' });
  });
});

for (const db of DB_KINDS) {
  describe(`edge: NUL bytes are catalogue errors on ${db}, nothing stored, nothing charged`, () => {
    let t: TestApp;
    let pro: TestAccount;
    before(async () => {
      t = await testApp({ db });
      pro = await createAccount(t.services, 'pro');
      const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'greeting', latex_with_placeholders: V2_SOURCE } });
      assert.equal(created.statusCode, 201);
    });
    after(() => t.close());

    async function send(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = pro.headers) {
      const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
      assert.ok(res.statusCode < 500, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res;
    }

    function assertField(res: { statusCode: number; json(): Record<string, unknown> }, field: string) {
      assert.equal(res.statusCode, 422);
      const body = res.json();
      assert.equal(body.error, 'validation_failed');
      assert.deepEqual(body.fields, [{ field, rule: 'no_nul', message: 'must not contain a NUL byte (\\u0000)' }]);
    }

    function assertAssetName(res: { statusCode: number; json(): Record<string, unknown> }, name: string) {
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json(), {
        error: 'invalid_asset_filename',
        message: `Asset ${JSON.stringify(name)}: the file name contains a null byte.`,
        asset: name,
      });
    }

    test('string fields of compile, templates, render and signup name the field', async () => {
      assertField(await send('POST', '/api/v1/compile', { latex: `${HELLO}\0` }), 'latex');
      assertField(await send('POST', '/api/v1/compile', { latex: HELLO, compiler: 'pdf\0latex' }), 'compiler');
      assertField(await send('POST', '/api/v1/templates', { name: 'a\0b', latex_content: HELLO }), 'name');
      assertField(await send('POST', '/api/v1/templates', { name: 'ok', latex_content: `${HELLO}\0` }), 'latex_content');
      assertField(await send('POST', '/api/v1/templates', { name: 'ok', latex_content: HELLO, description: '\0' }), 'description');
      assertField(await send('POST', '/api/v2/templates', { name: 'v2', latex_with_placeholders: `${V2_SOURCE}\0` }), 'latex_with_placeholders');
      assertField(await send('PATCH', '/api/v2/templates/greeting', { description: 'x\0' }), 'description');
      assertField(await send('POST', '/api/v2/templates/greeting/render', { data: { who: 'Ada\0' } }), 'data.who');
      assertField(await send('POST', '/api/v2/templates/greeting/render', { data: { who: 'Ada', 'k\0': 1 } }), 'data.k\0');
      assertField(await send('POST', '/api/v1/public_templates/any/render', { data: { list: ['x', 'y\0'] } }, {}), 'data.list.1');
      assertField(await send('POST', '/api/v1/signup', { email: 'a\0@example.com' }, {}), 'email');
    });

    test('asset names get invalid_asset_filename (SPEC §2.1) wherever they appear', async () => {
      assertAssetName(await send('POST', '/api/v1/compile', { latex: HELLO, assets: { 'logo\0.png': 'iVBORw0KGgo=' } }), 'logo\0.png');
      assertAssetName(await send('POST', '/api/v1/compile', { latex: HELLO, use_stored_assets: ['logo\0.png'] }), 'logo\0.png');
      assertAssetName(await send('POST', '/api/v1/assets', { name: 'logo\0.png', content_base64: 'iVBORw0KGgo=' }), 'logo\0.png');
      assertAssetName(await send('GET', '/api/v1/assets/logo%00.png'), 'logo\0.png');
      assertAssetName(await send('DELETE', '/api/v1/assets/logo%00.png'), 'logo\0.png');
      // A NUL in the base64 content is not in a name: the field is named instead.
      assertField(await send('POST', '/api/v1/compile', { latex: HELLO, assets: { 'logo.png': 'iVBO\0' } }), 'assets.logo.png');
    });

    test('path segments and query strings', async () => {
      for (const url of ['/api/v1/templates/a%00b', '/api/v2/templates/a%00b', '/api/v1/pdfs/a%00b', '/api/v1/public_templates/a%00b']) {
        assertField(await send('GET', url), url.includes('public') ? 'slug' : 'id');
      }
      assertField(await send('DELETE', '/api/v1/templates/a%00b'), 'id');
      assertField(await send('PATCH', '/api/v2/templates/a%00b', { description: 'x' }), 'id');
      assertField(await send('POST', '/api/v2/templates/a%00b/render', { data: { who: 'x' } }), 'id');
      assertField(await send('POST', '/api/v2/templates/a%00b/promote', {}), 'id');
      assertField(await send('GET', '/api/v1/pdfs/abc?sig=%00&exp=1'), 'sig');
      // A wildcard path names a file: with a NUL it names none.
      const file = await send('GET', '/build/manifest.json%00.js');
      assert.equal(file.statusCode, 404);
      assert.equal(file.json().error, 'not_found');
    });

    test('MCP tool arguments: the same codes inside the tool result', async () => {
      const call = async (name: string, args: Record<string, unknown>) => {
        const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...pro.headers, 'content-type': 'application/json' }, payload: rpc('tools/call', { name, arguments: args }) });
        assert.equal(res.statusCode, 200);
        const result = res.json().result;
        assert.equal(result.isError, true, name);
        return result.structuredContent as Record<string, unknown>;
      };
      assert.equal((await call('compile', { latex: HELLO, use_stored_assets: ['a\0.png'] })).error, 'invalid_asset_filename');
      assert.equal((await call('compile', { latex: HELLO, assets: { 'a\0.png': 'iVBORw0KGgo=' } })).error, 'invalid_asset_filename');
      assert.equal((await call('get_asset', { id_or_name: 'a\0.png' })).error, 'invalid_asset_filename');
      assert.equal((await call('delete_asset', { id_or_name: 'a\0.png' })).error, 'invalid_asset_filename');
      assert.equal((await call('save_asset', { name: 'a\0.png', content_base64: 'iVBORw0KGgo=' })).error, 'invalid_asset_filename');
      for (const [name, args, field] of [
        ['compile', { latex: `${HELLO}\0` }, 'latex'],
        ['save_template', { name: 'a\0', latex_content: HELLO }, 'name'],
        ['get_template', { id: 'a\0' }, 'id'],
        ['delete_template', { id: 'a\0' }, 'id'],
        ['render', { id: 'greeting', data: { who: '\0' } }, 'data.who'],
        ['render_public_template', { slug: 'x\0', data: {} }, 'slug'],
      ] as const) {
        const body = await call(name, args);
        assert.equal(body.error, 'validation_failed', name);
        assert.deepEqual(body.fields, [{ field, rule: 'no_nul', message: 'must not contain a NUL byte (\\u0000)' }], name);
      }
    });

    test('nothing was stored and nothing charged', async () => {
      const usage = (await send('GET', '/api/v1/usage')).json();
      assert.equal(usage.usage.used_this_month, 0);
      assert.equal(usage.templates.count, 1, 'only the template made in before()');
      assert.equal(usage.stored_assets.count, 0);
    });
  });
}

describe('edge: requests the framework refuses, over a real socket, in the catalogue shape', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await testApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(() => t.close());

  const get = (target: string, extraHeaders = '') => rawHttp(port, `GET ${target} HTTP/1.1\r\nHost: quire.test\r\n${extraHeaders}Connection: close\r\n\r\n`);

  function assertCatalogue(res: { status: number; headers: string; body: string }, status: number, code: string) {
    assert.equal(res.status, status, res.body);
    assert.match(res.headers, /content-type: application\/json/);
    const body = JSON.parse(res.body);
    assert.equal(body.error, code);
    assert.equal(typeof body.message, 'string');
    assert.equal(body.statusCode, undefined, 'not the framework body');
    assert.equal(body.code, undefined, 'not the framework body');
    return body;
  }

  test('a malformed percent-escape: 400 bad_request', async () => {
    for (const target of ['/api/v1/pdfs/%zz', '/api/v2/templates/%E0%A4%A/render', '/api/v1/assets/%']) {
      const res = await get(target);
      assertCatalogue(res, 400, 'bad_request');
      assert.match(res.headers, /x-request-id: [0-9a-f-]{36}/);
    }
  });

  test('an over-long path segment, an over-long URL and a 100 KB URL: 414 uri_too_long', async () => {
    assertCatalogue(await get(`/api/v1/pdfs/${'a'.repeat(2000)}`), 414, 'uri_too_long');
    const capped = assertCatalogue(await get(`/health?pad=${'a'.repeat(MAX_URL_LENGTH)}`), 414, 'uri_too_long');
    assert.equal(capped.limit, MAX_URL_LENGTH);
    assertCatalogue(await get(`/${'a'.repeat(100 * 1024)}`), 414, 'uri_too_long');
  });

  test('a 100 KB header: 431 headers_too_large', async () => {
    assertCatalogue(await get('/health', `X-Pad: ${'b'.repeat(100 * 1024)}\r\n`), 431, 'headers_too_large');
  });

  test('malformed HTTP: 400 bad_request', async () => {
    assertCatalogue(await rawHttp(port, 'GARBAGE\r\n\r\n'), 400, 'bad_request');
    assertCatalogue(await get('/health', 'X-Nul: a\0b\r\n'), 400, 'bad_request');
    assertCatalogue(await rawHttp(port, 'GET /a\0b HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'bad_request');
  });

  test('the server still answers afterwards', async () => {
    const res = await get('/health');
    assert.equal(res.status, 200);
  });
});

describe('edge: traversal under /docs/static never leaves the swagger-ui folder', () => {
  let t: TestApp;
  let port: number;
  let canaryDir: string;
  const canary = randomBytes(24).toString('hex');
  before(async () => {
    canaryDir = await mkdtemp(join(tmpdir(), 'quire-canary-'));
    await writeFile(join(canaryDir, 'canary.txt'), canary);
    t = await testApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(async () => {
    await t.close();
    await rm(canaryDir, { recursive: true, force: true });
  });

  test('encoded slashes, backslashes, dot segments and NUL: a catalogue 404, no file content', async () => {
    const up = '..%2f'.repeat(12);
    const canaryPath = canaryDir.split('/').filter(Boolean).join('%2f');
    const targets = [
      `/docs/static/${up}${canaryPath}%2fcanary.txt`,
      `/docs/static/%2f${canaryPath}%2fcanary.txt`,
      `/docs/static/${'%2e%2e%2f'.repeat(12)}etc%2fpasswd`,
      `/docs/static/${'..%5c'.repeat(12)}etc%5cpasswd`,
      `/docs/static/${'..%252f'.repeat(12)}etc%252fpasswd`,
      '/docs/static/..%2fpackage.json',
      '/docs/static/..%2f..%2fpackage.json',
      '/docs/static/../package.json',
      '/docs/static/.%2e/.%2e/package.json',
      '/docs/static/%00',
      '/docs/static/swagger-ui.css%00.html',
      '/docs/static/.hidden',
    ];
    for (const target of targets) {
      const res = await rawHttp(port, `GET ${target} HTTP/1.1\r\nHost: quire.test\r\nConnection: close\r\n\r\n`);
      assert.ok([400, 404].includes(res.status), `${target}: ${res.status}`);
      const body = JSON.parse(res.body);
      assert.ok(['not_found', 'bad_request'].includes(body.error), `${target}: ${body.error}`);
      assert.equal(typeof body.message, 'string');
      for (const secret of [canary, 'root:x:0:0', '"name": "@fastify/swagger-ui"', '"name": "quire"']) {
        assert.ok(!res.body.includes(secret), `${target} leaked ${secret}`);
      }
    }
  });

  test('the real files are still served', async () => {
    const res = await rawHttp(port, 'GET /docs/static/swagger-ui.css HTTP/1.1\r\nHost: quire.test\r\nConnection: close\r\n\r\n');
    assert.equal(res.status, 200);
    assert.match(res.headers, /content-type: text\/css/);
  });
});

describe('edge: /mcp checks Origin (DNS rebinding)', () => {
  const ping = rpc('ping', {});
  const mcp = (t: TestApp, origin?: string, method: 'POST' | 'GET' = 'POST') =>
    t.app.inject({ method, url: '/mcp', headers: { 'content-type': 'application/json', ...(origin === undefined ? {} : { origin }) }, ...(method === 'POST' ? { payload: ping } : {}) });

  describe('default: only the base URL origin', () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ env: { QUIRE_BASE_URL: 'https://quire.example:8443/' } });
    });
    after(() => t.close());

    test('a foreign or opaque Origin: 403 origin_not_allowed and no CORS grant; GET too', async () => {
      for (const origin of ['https://evil.example', 'null', 'https://quire.example', 'http://quire.example:8443', 'https://quire.example:8443.evil.example']) {
        const res = await mcp(t, origin);
        assert.equal(res.statusCode, 403, origin);
        assert.deepEqual(res.json(), {
          error: 'origin_not_allowed',
          message: `Browser pages from ${JSON.stringify(origin)} may not call /mcp. The operator can allow an origin with QUIRE_MCP_ALLOWED_ORIGINS.`,
          origin,
        });
        assert.equal(res.headers['access-control-allow-origin'], undefined);
      }
      const get = await mcp(t, 'https://evil.example', 'GET');
      assert.equal(get.statusCode, 403);
    });

    test('the base URL origin and no Origin at all: 200', async () => {
      const own = await mcp(t, 'https://quire.example:8443');
      assert.equal(own.statusCode, 200);
      assert.deepEqual(own.json(), { jsonrpc: '2.0', id: 1, result: {} });
      assert.equal(own.headers['access-control-allow-origin'], 'https://quire.example:8443');
      const agent = await mcp(t);
      assert.equal(agent.statusCode, 200);
      assert.deepEqual(agent.json(), { jsonrpc: '2.0', id: 1, result: {} });
    });

    test('the REST API keeps its open CORS', async () => {
      const res = await t.app.inject({ url: '/api/v1/public_templates', headers: { origin: 'https://evil.example' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['access-control-allow-origin'], '*');
    });
  });

  describe('QUIRE_MCP_ALLOWED_ORIGINS', () => {
    test('a configured list replaces the default', async () => {
      const t = await testApp({ env: { QUIRE_MCP_ALLOWED_ORIGINS: 'https://App.example, http://localhost:5173/' } });
      try {
        assert.deepEqual(t.services.config.mcpAllowedOrigins, ['https://app.example', 'http://localhost:5173']);
        assert.equal((await mcp(t, 'https://app.example')).statusCode, 200);
        assert.equal((await mcp(t, 'http://localhost:5173')).statusCode, 200);
        assert.equal((await mcp(t, 'http://quire.test')).statusCode, 403, 'the base URL is not added back');
        assert.equal((await mcp(t, 'https://evil.example')).statusCode, 403);
        const pre = await t.app.inject({ method: 'OPTIONS', url: '/mcp', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' } });
        assert.equal(pre.statusCode, 204);
        assert.equal(pre.headers['access-control-allow-origin'], 'http://localhost:5173');
      } finally {
        await t.close();
      }
    });

    test('* allows every origin', async () => {
      const t = await testApp({ env: { QUIRE_MCP_ALLOWED_ORIGINS: '*' } });
      try {
        const res = await mcp(t, 'https://evil.example');
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['access-control-allow-origin'], '*');
      } finally {
        await t.close();
      }
    });

    test('values that are not origins are refused at start', () => {
      for (const bad of ['ftp://x.example', 'https://a.example/path', 'https://a.example?q', 'quire.example', '*,https://a.example', 'https://user@a.example']) {
        assert.throws(() => loadConfig({ QUIRE_DATA_DIR: tmpdir(), QUIRE_SECRET: 'test-secret-0123456789abcdef', QUIRE_MCP_ALLOWED_ORIGINS: bad }), ConfigError, bad);
      }
      const defaults = loadConfig({ QUIRE_DATA_DIR: tmpdir(), QUIRE_SECRET: 'test-secret-0123456789abcdef', QUIRE_BASE_URL: 'https://docs.example/quire' });
      assert.deepEqual(defaults.mcpAllowedOrigins, ['https://docs.example']);
    });
  });
});
