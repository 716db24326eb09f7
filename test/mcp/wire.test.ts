// Wire bodies are declared once: each MCP tool answers with the very schema object its HTTP
// route declares for the same operation, and real bodies (from real TeX compiles, over HTTP and
// over MCP) fit those schemas with no undeclared field. Either kind of drift fails here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { DOCUMENTED } from '../../src/documented.js';
import { AssetListBody, GetAssetResult, SaveAssetResult } from '../../src/assets/schemas.js';
import { UsageBody } from '../../src/accounts/schemas.js';
import { CompileFailureBody, CompileSuccessBody } from '../../src/compile/schemas.js';
import { GalleryDetailBody, PublicRenderSuccessBody } from '../../src/gallery/schemas.js';
import { assetRoutes } from '../../src/http/assets.js';
import { compileRoutes } from '../../src/http/compile.js';
import { galleryRoutes } from '../../src/http/gallery.js';
import { jobRoutes } from '../../src/http/jobs.js';
import { templateRoutes } from '../../src/http/templates.js';
import type { App } from '../../src/http/types.js';
import { usageRoutes } from '../../src/http/usage.js';
import { AcceptedBody, JobBody } from '../../src/jobs/schemas.js';
import { plain } from '../../src/mcp/checks.js';
import { mcpTools } from '../../src/mcp/index.js';
import type { Tool } from '../../src/mcp/tool.js';
import { assetTools } from '../../src/mcp/tools/assets.js';
import { compileTool } from '../../src/mcp/tools/compile.js';
import { galleryTools } from '../../src/mcp/tools/gallery.js';
import { getJobTool } from '../../src/mcp/tools/jobs.js';
import { templateTools } from '../../src/mcp/tools/templates.js';
import { usageTool } from '../../src/mcp/tools/usage.js';
import { RenderSuccessBody, SaveTemplateResponse, TemplateListResponse, TemplateV1Response } from '../../src/templates/schemas.js';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';

type Body = Record<string, unknown>;

/** Each tool mirroring a route: method, URL and the success status whose schema it advertises. */
const OPERATIONS: Record<string, { method: string; url: string; status: number }> = {
  compile: { method: 'POST', url: '/api/v1/compile', status: 200 },
  render: { method: 'POST', url: '/api/v2/templates/:id/render', status: 200 },
  render_public_template: { method: 'POST', url: '/api/v1/public_templates/:slug/render', status: 200 },
  list_public_templates: { method: 'GET', url: '/api/v1/public_templates', status: 200 },
  get_public_template: { method: 'GET', url: '/api/v1/public_templates/:slug', status: 200 },
  list_templates: { method: 'GET', url: '/api/v1/templates', status: 200 },
  save_template: { method: 'POST', url: '/api/v1/templates', status: 201 },
  usage: { method: 'GET', url: '/api/v1/usage', status: 200 },
  list_assets: { method: 'GET', url: '/api/v1/assets', status: 200 },
  get_asset: { method: 'GET', url: '/api/v1/assets/:id_or_name', status: 200 },
  save_asset: { method: 'POST', url: '/api/v1/assets', status: 201 },
  get_job: { method: 'GET', url: '/api/v1/jobs/:job_id', status: 200 },
};
/** Tools with no HTTP body to mirror (HTTP answers 204) or an MCP-only composition. */
const MCP_ONLY = ['get_template', 'delete_template', 'delete_asset'];

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/**
 * The schema with every object that does not say otherwise closed: an undeclared field fails.
 * The parts of an allOf stay open (each sees the fields of the others).
 */
function closed(schema: unknown, close = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => closed(item, close));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Body = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value, key !== 'allOf')]));
  if (close && out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

function assertFits(schema: TSchema, body: unknown, what: string): void {
  const check = ajv.compile(closed(plain(schema)) as object);
  assert.ok(check(body), `${what} does not fit its schema: ${JSON.stringify(check.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
}

describe('wire bodies', () => {
  test('each MCP tool advertises the response schema object of its HTTP route', async () => {
    const responses = new Map<string, Record<number, unknown>>();
    const t = await testApp();
    // Route schemas carry documented types (src/documented.ts): the validator knows the keyword.
    const app: App = Fastify({ loggerInstance: t.services.log, ajv: { customOptions: { keywords: [DOCUMENTED] } } }).withTypeProvider<TypeBoxTypeProvider>();
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) responses.set(`${method} ${route.url}`, (route.schema?.response ?? {}) as Record<number, unknown>);
    });
    try {
      for (const routes of [compileRoutes, templateRoutes, galleryRoutes, usageRoutes, assetRoutes, jobRoutes]) routes(app, t.services);
      await app.ready();
    } finally {
      await app.close();
      await t.close();
    }
    const tools: Tool[] = [compileTool, ...galleryTools, ...templateTools, usageTool, ...assetTools, getJobTool];
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [...Object.keys(OPERATIONS), ...MCP_ONLY].sort());
    for (const tool of tools) {
      const operation = OPERATIONS[tool.name];
      if (!operation) continue;
      const declared = responses.get(`${operation.method} ${operation.url}`)?.[operation.status] as { content?: Record<string, { schema: unknown }> } | undefined;
      // A route with several answer types (compile's PDF answer, an extension) declares its JSON one under content.
      const schema = declared?.content?.['application/json']?.schema ?? declared;
      assert.ok(schema, `no ${operation.status} schema on ${operation.method} ${operation.url}`);
      assert.equal(tool.outputSchema, schema, `${tool.name} advertises another schema than ${operation.method} ${operation.url}`);
    }
    // The async door wraps the same object with the accepted body, and the error body is added by the registry.
    const wrapped = mcpTools().find((tool) => tool.name === 'compile');
    assert.deepEqual(plain(wrapped!.outputSchema), { type: 'object', properties: {}, anyOf: [plain(CompileSuccessBody), plain(AcceptedBody)] });
  });

  describe('real bodies fit their schemas', () => {
    let t: TestApp;
    let pro: TestAccount;
    before(async () => {
      t = await testApp();
      pro = await createAccount(t.services, 'pro');
    });
    after(async () => t.close());

    const post = (url: string, payload: object, headers: Record<string, string> = pro.headers) => t.app.inject({ method: 'POST', url, payload, headers });
    const get = (url: string, headers: Record<string, string> = pro.headers) => t.app.inject({ url, headers });

    test('compile: success (anonymous and keyed) and failure', async () => {
      const anonymous = await post('/api/v1/compile', { latex: HELLO }, {});
      assert.equal(anonymous.statusCode, 200, anonymous.body);
      assert.equal(anonymous.json().anonymous, true);
      assertFits(CompileSuccessBody, anonymous.json(), 'anonymous CompileSuccess');
      const keyed = await post('/api/v1/compile', { latex: HELLO.replace('Hello', 'See \\ref{nowhere}') });
      assert.equal(keyed.statusCode, 200, keyed.body);
      assert.equal(keyed.json().warnings[0].type, 'undefined_reference');
      assertFits(CompileSuccessBody, keyed.json(), 'keyed CompileSuccess');
      const failed = await post('/api/v1/compile', { latex: HELLO.replace('Hello', '\\undefinedcommand') });
      assert.equal(failed.statusCode, 422, failed.body);
      assert.equal(failed.json().error, 'compilation_failed');
      assertFits(CompileFailureBody, failed.json(), 'CompileFailure');
    });

    test('templates: save, list, get, render', async () => {
      const saved = await post('/api/v1/templates', { name: 'wire', latex_content: HELLO.replace('Hello', 'Hello {{ who }}'), placeholder_engine: 'liquid' });
      assert.equal(saved.statusCode, 201, saved.body);
      assertFits(SaveTemplateResponse, saved.json(), 'saved template');
      assertFits(TemplateListResponse, (await get('/api/v1/templates')).json(), 'template list');
      assertFits(TemplateV1Response, (await get('/api/v1/templates/wire')).json(), 'template');
      const rendered = await post(`/api/v2/templates/${saved.json().template.id}/render`, { data: { who: 'wire' } });
      assert.equal(rendered.statusCode, 200, rendered.body);
      assertFits(RenderSuccessBody, rendered.json(), 'render');
    });

    test('gallery: detail and public render', async () => {
      const slug = t.services.gallery.list()[0]!.slug;
      const detail = await get(`/api/v1/public_templates/${slug}`, {});
      assertFits(GalleryDetailBody, detail.json(), 'gallery detail');
      const rendered = await post(`/api/v1/public_templates/${slug}/render`, { data: detail.json().sample_data }, {});
      assert.equal(rendered.statusCode, 200, rendered.body);
      assertFits(PublicRenderSuccessBody, rendered.json(), 'public render');
    });

    test('assets and usage', async () => {
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      const saved = await post('/api/v1/assets', { name: 'dot.png', content_base64: png });
      assert.equal(saved.statusCode, 201, saved.body);
      assertFits(SaveAssetResult, saved.json(), 'saved asset');
      assertFits(AssetListBody, (await get('/api/v1/assets')).json(), 'asset list');
      assertFits(GetAssetResult, (await get('/api/v1/assets/dot.png')).json(), 'asset');
      assertFits(UsageBody, (await get('/api/v1/usage')).json(), 'usage');
    });

    test('an async compile: accepted, then the job with its CompileSuccess', async () => {
      const accepted = await post('/api/v1/compile', { latex: HELLO, async: true });
      assert.equal(accepted.statusCode, 202, accepted.body);
      assertFits(AcceptedBody, accepted.json(), 'accepted');
      const job = await waitForJob(async () => (await get(`/api/v1/jobs/${accepted.json().job_id}`)).json());
      assert.equal(job.status, 'succeeded');
      assertFits(JobBody, job, 'job');
      assertFits(CompileSuccessBody, job.result, 'job result');
    });

    test('MCP compile: structuredContent fits the advertised schema, success and failure', async () => {
      const call = async (args: Body) => {
        const reply = await post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'compile', arguments: args } }, {
          ...pro.headers,
          accept: 'application/json, text/event-stream',
        });
        assert.equal(reply.statusCode, 200, reply.body);
        return reply.json().result as { structuredContent: Body; isError?: boolean; content: Array<{ text: string }> };
      };
      const ok = await call({ latex: HELLO });
      assert.equal(ok.isError, undefined);
      assertFits(CompileSuccessBody, ok.structuredContent, 'MCP compile');
      const failed = await call({ latex: HELLO.replace('Hello', '\\undefinedcommand') });
      assert.equal(failed.isError, true);
      assert.equal(failed.structuredContent.error, 'compilation_failed');
      assertFits(CompileFailureBody, failed.structuredContent, 'MCP compile failure');
      // A replay reads the stored body back: it still fits the output schema, so its text is the usual one.
      const first = await call({ latex: HELLO, idempotency_key: 'wire-1' });
      const replayed = await call({ latex: HELLO, idempotency_key: 'wire-1' });
      assert.deepEqual(replayed.structuredContent, first.structuredContent);
      assert.match(first.content[0]!.text, /^PDF ready: /);
      assert.equal(replayed.content[0]!.text, first.content[0]!.text);
    });
  });
});
