// The /mcp door at the wire: JSON-RPC 2.0 framing, batches, notifications, every error code,
// and tool visibility by header presence (SPEC §4.7, §5.5). app.inject, real services.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { handleBody, type RpcCall } from '../../src/mcp/jsonrpc.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { MAX_BATCH } from '../../src/mcp/jsonrpc.js';

// SPEC §4.7's two sets (get_job added, docs/mcp.md), and our extensions listed on request.
const PUBLIC_TOOLS = ['compile', 'get_public_template', 'list_public_templates', 'render_public_template'];
const ALL_TOOLS = [
  ...PUBLIC_TOOLS,
  'delete_asset',
  'delete_template',
  'get_asset',
  'get_job',
  'get_template',
  'list_assets',
  'list_templates',
  'render',
  'save_asset',
  'save_template',
  'usage',
].sort();
const PUBLIC_EXTENSIONS = ['validate', 'check_pdf'];
const EXTENSIONS = [...PUBLIC_EXTENSIONS, 'list_template_versions', 'restore_template_version', 'list_signing_identities', 'delete_signing_identity'];

type Reply = { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

describe('POST /mcp (JSON-RPC)', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    // A small body limit, so the 413 case needs no large payload.
    t = await testApp({ env: { QUIRE_BODY_LIMIT: String(256 * 1024) } });
    account = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  async function post(payload: unknown, headers: Record<string, string> = {}, url = '/mcp') {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    return t.app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json', ...headers } });
  }

  async function rpc(method: string, params?: unknown, headers: Record<string, string> = {}, url = '/mcp'): Promise<Reply> {
    const res = await post({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }, headers, url);
    assert.equal(res.statusCode, 200);
    return res.json<Reply>();
  }

  async function toolNames(headers: Record<string, string>, url = '/mcp'): Promise<string[]> {
    const reply = await rpc('tools/list', {}, headers, url);
    return (reply.result!.tools as Array<{ name: string }>).map((tool) => tool.name).sort();
  }

  test('a single request gets a single response, with no session header and no Accept needed', async () => {
    const res = await post({ jsonrpc: '2.0', id: 'p-1', method: 'ping' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['mcp-session-id'], undefined);
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 'p-1', result: {} });
  });

  test('a batch of one gets an array of one', async () => {
    const res = await post([{ jsonrpc: '2.0', id: 7, method: 'ping' }]);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), [{ jsonrpc: '2.0', id: 7, result: {} }]);
  });

  test('a mixed batch: answers in order, notifications skipped, an invalid element answered alone', async () => {
    const res = await post([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      42,
      { jsonrpc: '1.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', method: 'no/such/notification' },
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
    ]);
    assert.equal(res.statusCode, 200);
    const replies = res.json<Reply[]>();
    assert.deepEqual(
      replies.map((r) => [r.id, r.error?.code ?? 'ok']),
      [
        [1, 'ok'],
        [null, -32600],
        [2, -32600],
        [3, -32601],
        [4, -32602],
        [5, 'ok'],
      ],
    );
    for (const reply of replies) assert.equal(reply.jsonrpc, '2.0');
  });

  test('a body of only notifications gets 202 and no body', async () => {
    for (const payload of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      ],
    ]) {
      const res = await post(payload);
      assert.equal(res.statusCode, 202);
      assert.equal(res.body, '');
    }
  });

  test('malformed JSON is a parse error (-32700) with a null id, not the HTTP 400', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": "ping"', 'nope', '']) {
      const res = await post(body);
      assert.equal(res.statusCode, 200, body);
      const reply = res.json<Reply>();
      assert.equal(reply.id, null);
      assert.equal(reply.error?.code, -32700);
    }
  });

  test('an empty batch is -32600', async () => {
    const res = await post([]);
    assert.equal(res.statusCode, 200);
    const reply = res.json<Reply>();
    assert.equal(reply.id, null);
    assert.equal(reply.error?.code, -32600);
  });

  test('a batch over the cap is one -32600; a batch at the cap is answered whole', async () => {
    const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    const over = (await post(pings(MAX_BATCH + 1))).json<Reply>();
    assert.equal(over.id, null);
    assert.equal(over.error?.code, -32600);
    assert.match(over.error?.message ?? '', new RegExp(`at most ${MAX_BATCH}`));
    const full = (await post(pings(MAX_BATCH))).json<Reply[]>();
    assert.equal(full.length, MAX_BATCH);
    assert.deepEqual(full.map((r) => r.id), pings(MAX_BATCH).map((p) => p.id));
  });

  test('invalid requests are -32600, carrying the id when it is usable', async () => {
    const cases: Array<[unknown, unknown]> = [
      [{ id: 1, method: 'ping' }, 1],
      [{ jsonrpc: '2.0', id: 2 }, 2],
      [{ jsonrpc: '2.0', id: 3, method: 12 }, 3],
      [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: 4, method: 'ping', params: 'x' }, 4],
      ['"just a string"', null],
    ];
    for (const [message, id] of cases) {
      const res = await post(message);
      assert.equal(res.statusCode, 200);
      const reply = res.json<Reply>();
      assert.equal(reply.error?.code, -32600, JSON.stringify(message));
      assert.equal(reply.id, id);
    }
  });

  test('an unknown method is -32601', async () => {
    const reply = await rpc('sampling/createMessage', {});
    assert.equal(reply.error?.code, -32601);
    assert.match(reply.error!.message, /sampling\/createMessage/);
  });

  test('bad params are -32602', async () => {
    const cases: Array<[string, unknown]> = [
      ['tools/call', {}],
      ['tools/call', { name: 'no_such_tool', arguments: {} }],
      ['tools/call', { name: 'compile', arguments: 'latex' }],
      ['tools/call', { name: 'compile', arguments: [1] }],
      ['tools/list', ['positional']],
      ['tools/list', { cursor: 'page-2' }],
      ['initialize', { protocolVersion: 20250618 }],
      ['resources/read', {}],
      ['prompts/get', { name: 'no_such_prompt' }],
      ['prompts/get', { name: 'fix_latex_error', arguments: {} }],
      ['prompts/get', { name: 'fix_latex_error', arguments: { latex: 5 } }],
    ];
    for (const [method, params] of cases) {
      const reply = await rpc(method, params);
      assert.equal(reply.error?.code, -32602, `${method} ${JSON.stringify(params)}`);
    }
  });

  test('GET (and other methods) on /mcp: 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/mcp', headers: { accept: 'text/event-stream' } });
      assert.equal(res.statusCode, 405);
      assert.equal(res.headers.allow, 'POST');
      assert.equal(res.json().error, 'method_not_allowed');
    }
  });

  test('any content type is read as JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('initialize answers a supported revision as asked, anything else with the newest', async () => {
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      const reply = await rpc('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } });
      assert.equal(reply.result!.protocolVersion, version);
    }
    const reply = await rpc('initialize', { protocolVersion: '2023-01-01', capabilities: {} });
    assert.equal(reply.result!.protocolVersion, '2025-11-25');
    assert.deepEqual(reply.result!.serverInfo, { name: 'quire', title: 'Quire', version: '1.5.0' });
    const capabilities = reply.result!.capabilities as Record<string, unknown>;
    assert.ok(capabilities.tools && capabilities.resources && capabilities.prompts);
  });

  test('server/discover lists the revisions, capabilities and server info', async () => {
    const reply = await rpc('server/discover');
    assert.deepEqual(reply.result!.supportedVersions, ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
    assert.equal((reply.result!.serverInfo as { name: string }).name, 'quire');
    assert.ok(reply.result!.capabilities);
  });

  test('tool visibility follows the presence of credentials, not their validity', async () => {
    assert.deepEqual(await toolNames({}), PUBLIC_TOOLS);
    assert.deepEqual(await toolNames({ authorization: 'Bearer not-a-key' }), ALL_TOOLS);
    assert.deepEqual(await toolNames({ authorization: 'Basic Zm9vOmJhcg==' }), ALL_TOOLS);
    assert.deepEqual(await toolNames(account.headers), ALL_TOOLS);
    // Our choice: X-API-Key is the other way to send a key (SPEC §5.2), so it counts as present.
    assert.deepEqual(await toolNames({ 'x-api-key': account.key }), ALL_TOOLS);
  });

  test('the extension tools: listed with ?extensions=1 only, callable either way; another value is validation_failed', async () => {
    assert.equal(PUBLIC_TOOLS.length + PUBLIC_EXTENSIONS.length, 6);
    assert.deepEqual(await toolNames({}, '/mcp?extensions=1'), [...PUBLIC_TOOLS, ...PUBLIC_EXTENSIONS].sort());
    assert.deepEqual(await toolNames(account.headers, '/mcp?extensions=1'), [...ALL_TOOLS, ...EXTENSIONS].sort());
    assert.deepEqual(await toolNames(account.headers, '/mcp?extensions=0'), ALL_TOOLS);
    // initialize names validate only where it is listed.
    assert.doesNotMatch(String((await rpc('initialize', {})).result!.instructions), /validate/);
    assert.match(String((await rpc('initialize', {}, {}, '/mcp?extensions=1')).result!.instructions), /Call `validate` first/);
    // Unlisted, still callable: validate without a key, a version list with one.
    const validated = await rpc('tools/call', { name: 'validate', arguments: { latex: '\\documentclass{article}\\begin{document}x\\end{document}' } });
    assert.equal(validated.result!.isError, undefined, JSON.stringify(validated.result));
    assert.ok(Array.isArray((validated.result!.structuredContent as { findings: unknown[] }).findings));
    const versions = await rpc('tools/call', { name: 'list_template_versions', arguments: { id: 'nope' } }, account.headers);
    assert.equal(versions.result!.isError, true);
    assert.equal((versions.result!.structuredContent as { error: string }).error, 'template_not_found');
    const bad = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}, '/mcp?extensions=yes');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().error, 'validation_failed');
    assert.deepEqual(bad.json().fields.map((f: { field: string }) => f.field), ['extensions']);
  });

  test('every listed tool has an object inputSchema, a title and an agent-facing description', async () => {
    const reply = await rpc('tools/list', {}, account.headers);
    for (const tool of reply.result!.tools as Array<Record<string, unknown>>) {
      assert.equal((tool.inputSchema as { type: string }).type, 'object', String(tool.name));
      assert.ok(typeof tool.title === 'string' && tool.title.length > 0);
      assert.ok(typeof tool.description === 'string' && (tool.description as string).length > 60, String(tool.name));
      if (tool.outputSchema) assert.equal((tool.outputSchema as { type: string }).type, 'object');
    }
  });

  test('an invalid key is a tool error (isError), never a JSON-RPC error or an HTTP 401', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'usage', arguments: {} } },
      { authorization: 'Bearer qk_0000' },
    );
    assert.equal(res.statusCode, 200);
    const reply = res.json<Reply>();
    assert.equal(reply.error, undefined);
    assert.equal(reply.result!.isError, true);
    assert.equal((reply.result!.structuredContent as { error: string }).error, 'invalid_api_key');
    const [content] = reply.result!.content as Array<{ type: string; text: string }>;
    assert.equal(content!.type, 'text');
    assert.match(content!.text, /invalid_api_key/);
  });

  test('a keyed tool called without credentials is a tool error naming the missing key', async () => {
    const reply = await rpc('tools/call', { name: 'usage', arguments: {} });
    assert.equal(reply.result!.isError, true);
    assert.equal((reply.result!.structuredContent as { error: string }).error, 'missing_api_key');
  });

  test('usage through MCP is the HTTP body', async () => {
    const reply = await rpc('tools/call', { name: 'usage' }, account.headers);
    const http = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: account.headers });
    assert.equal(reply.result!.isError, undefined);
    assert.deepEqual(reply.result!.structuredContent, http.json());
  });

  test('resources: list, read the guide and limits, and -32002 for an unknown uri', async () => {
    const list = await rpc('resources/list');
    const uris = (list.result!.resources as Array<{ uri: string }>).map((r) => r.uri);
    assert.ok(uris.includes('quire://guide') && uris.includes('quire://limits'));
    const guide = await rpc('resources/read', { uri: 'quire://guide' });
    const [text] = guide.result!.contents as Array<{ uri: string; mimeType: string; text: string }>;
    assert.equal(text!.mimeType, 'text/markdown');
    assert.match(text!.text, /compile/);
    const limits = await rpc('resources/read', { uri: 'quire://limits' });
    const [json] = limits.result!.contents as Array<{ text: string }>;
    assert.equal(JSON.parse(json!.text).plans.free.max_pages_per_document, 5);
    const missing = await rpc('resources/read', { uri: 'quire://nothing' });
    assert.equal(missing.error?.code, -32002);
    const templates = await rpc('resources/templates/list');
    assert.ok(Array.isArray(templates.result!.resourceTemplates));
  });

  test('prompts: list and get', async () => {
    const list = await rpc('prompts/list');
    const names = (list.result!.prompts as Array<{ name: string }>).map((p) => p.name);
    assert.deepEqual(names, ['fix_latex_error', 'write_latex_document', 'fill_public_template']);
    const got = await rpc('prompts/get', { name: 'fix_latex_error', arguments: { latex: '\\documentclass{article}', error: 'Undefined control sequence' } });
    const [message] = got.result!.messages as Array<{ role: string; content: { type: string; text: string } }>;
    assert.equal(message!.role, 'user');
    assert.match(message!.content.text, /Undefined control sequence/);
    assert.match(message!.content.text, /\\documentclass\{article\}/);
  });

  test('compile refusals through MCP carry the same code and fields as over HTTP, and cost nothing', async () => {
    const bodies: Array<Record<string, unknown>> = [
      {},
      { latex: 42 },
      { latex: 'Just some prose, no LaTeX here.' },
      { latex: '\\documentclass{article}', compiler: 'tex' },
      { latex: '\\documentclass{article}', compiler: 'lualatex' },
      { latex: '\\documentclass{article}', use_stored_assets: 'logo.png' },
      { latex: '\\documentclass{article}', assets: { 'a.png': 'AAAA' } },
    ];
    for (const headers of [{}, account.headers]) {
      for (const body of bodies) {
        const http = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: body, headers });
        const reply = await rpc('tools/call', { name: 'compile', arguments: body }, headers);
        const mcp = reply.result!.structuredContent as Record<string, unknown>;
        assert.equal(reply.result!.isError, true);
        const expected = http.json();
        assert.equal(mcp.error, expected.error, JSON.stringify(body));
        assert.deepEqual(mcp.fields, expected.fields);
      }
    }
    const usage = await rpc('tools/call', { name: 'usage' }, account.headers);
    assert.equal((usage.result!.structuredContent as { usage: { used_this_month: number } }).usage.used_this_month, 0);
  });

  test('a body over the server limit is the HTTP 413', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(t.services.config.bodyLimit) } });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().error, 'payload_too_large');
  });
});

describe('handleBody', () => {
  test('an unexpected failure is -32603 for that element alone, reported once, and silent for a notification', async () => {
    const failures: unknown[] = [];
    const dispatch = async (call: RpcCall) => {
      if (call.method === 'boom') throw new Error('disk on fire');
      return { ok: true };
    };
    const reply = await handleBody(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'boom' },
        { jsonrpc: '2.0', id: 2, method: 'fine' },
        { jsonrpc: '2.0', method: 'boom' },
      ]),
      dispatch,
      (err) => failures.push(err),
    );
    assert.deepEqual(reply, [
      { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error: the server failed to answer; retry later.' } },
      { jsonrpc: '2.0', id: 2, result: { ok: true } },
    ]);
    assert.equal(failures.length, 2);
  });
});
