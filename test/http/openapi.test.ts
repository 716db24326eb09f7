// The OpenAPI document passes Redocly's recommended lint (0 errors, 0 warnings; the one
// exception is explained in redocly.yaml), and openapi.json at the root is the served document.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { OPENAPI_FILE, openapiText } from '../../scripts/openapi.js';
import { ERROR_CODES } from '../../src/errors.js';
import { mcpTools } from '../../src/mcp/index.js';
import { assertSameLines, testApp, type TestApp } from '../helpers.js';

/** The MCP tools and the operations they mirror (the same name, camelCase, where it reads alone). */
const MIRRORS: Record<string, string> = {
  compile: 'compile',
  list_public_templates: 'listPublicTemplates',
  get_public_template: 'getPublicTemplate',
  render_public_template: 'renderPublicTemplate',
  render: 'renderTemplate',
  list_templates: 'listTemplates',
  get_template: 'getTemplate',
  save_template: 'saveTemplate',
  delete_template: 'deleteTemplate',
  usage: 'getUsage',
  list_assets: 'listAssets',
  get_asset: 'getAsset',
  save_asset: 'saveAsset',
  delete_asset: 'deleteAsset',
  get_job: 'getJob',
  list_template_versions: 'listTemplateVersions',
  restore_template_version: 'restoreTemplateVersion',
  validate: 'validate',
  check_pdf: 'checkPdf',
  list_signing_identities: 'listSigningIdentities',
  delete_signing_identity: 'deleteSigningIdentity',
};

interface Schema {
  type?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}
interface Op {
  operationId?: string;
  security?: unknown[];
  tags?: string[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

/** Request fields that say nothing of their type (a generated client would type them `unknown`). */
function untyped(schema: Schema, at: string): string[] {
  const typed = schema.type !== undefined || schema.anyOf || schema.oneOf || schema.allOf || schema.const !== undefined || schema.enum;
  const own = typed ? [] : [at];
  const nested = [
    ...Object.entries(schema.properties ?? {}).flatMap(([name, field]) => untyped(field, `${at}.${name}`)),
    ...(schema.items ? untyped(schema.items, `${at}[]`) : []),
    ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap((member) => untyped(member, at)),
  ];
  return [...own, ...nested];
}

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('the OpenAPI document', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  test('Redocly lint (recommended rules) finds 0 errors and 0 warnings in the served document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-redocly-'));
    try {
      await writeFile(join(dir, 'openapi.json'), (await t.app.inject({ url: '/openapi.json' })).body);
      for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml']) await copyFile(join(root, file), join(dir, file));
      const { stdout, stderr } = await run(join(root, 'node_modules', '.bin', 'redocly'), ['lint', 'openapi.json', '--format=summary'], {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      }).catch((err: { stdout: string; stderr: string }) => err);
      // Without the boxed notice on the Node version Redocly prints first (it speaks of a "warning").
      const output = `${stdout}\n${stderr}`
        .split('\n')
        .filter((line) => !/[║╔╚]/.test(line))
        .join('\n');
      assert.match(output, /Your API description is valid/, output);
      assert.doesNotMatch(output, /warning/i, output);
      console.log(`redocly: ${output.match(/validated in \d+ms/)?.[0]}, 0 errors, 0 warnings, ${output.match(/(\d+) problems? (is|are) explicitly ignored/)?.[1] ?? 0} ignored (redocly.yaml)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('what issue #25 found untrue is true: binary bodies, 415 and invalid_json, security, operationIds, typed fields, license', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { info: { license?: { name: string } }; tags: Array<{ name: string }>; paths: Record<string, Record<string, Op>> };
    const ops = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));
    const codesOf = (op: Op, status: string): unknown => op.responses[status]?.content?.['application/json']?.schema.properties?.error?.enum;

    const pdf = doc.paths['/api/v1/pdfs/{id}']!.get!;
    const preview = doc.paths['/api/v1/public_templates/{slug}/preview.png']!.get!;
    for (const [op, status, type] of [[pdf, '200', 'application/pdf'], [pdf, '206', 'application/pdf'], [preview, '200', 'image/png']] as const) {
      assert.deepEqual(Object.keys(op.responses[status]!.content!), [type]);
      assert.equal(op.responses[status]!.content![type]!.schema.type, 'string');
      assert.equal((op.responses[status]!.content![type]!.schema as { format?: string }).format, 'binary');
    }
    assert.equal(preview.responses['304']!.content, undefined, 'a 304 has no body');
    for (const [status, response] of [...Object.entries(pdf.responses), ...Object.entries(preview.responses)]) {
      if (Number(status) >= 400) assert.deepEqual(Object.keys(response.content!), ['application/json'], `error ${status} is JSON`);
    }

    const names = new Set<string>();
    for (const { name, op } of ops) {
      assert.ok(Array.isArray(op.security), `${name} declares security (or security: [])`);
      assert.ok(op.operationId && !names.has(op.operationId), `${name} has its own operationId`);
      names.add(op.operationId);
      assert.ok(op.tags?.length && op.tags.every((tag) => doc.tags.some((declared) => declared.name === tag)), `${name} has declared tags`);
      assert.ok(Object.keys(op.responses).some((status) => status.startsWith('4')), `${name} declares a 4XX`);
      const json = op.requestBody?.content['application/json']?.schema;
      if (!json) continue;
      assert.deepEqual(untyped(json, 'body'), [], `${name}: request fields without a type`);
      if (op.operationId === 'mcp') continue; // parses its own bodies: a JSON-RPC parse error, never 400/415
      assert.deepEqual(codesOf(op, '415'), ['unsupported_media_type'], name);
      assert.ok((codesOf(op, '400') as string[]).includes('invalid_json'), name);
    }
    for (const public_ of ['getHealth', 'downloadPdf', 'signUp', 'listPublicTemplates', 'getPublicTemplate', 'getPublicTemplatePreview', 'openMcpStream']) {
      assert.deepEqual(ops.find(({ op }) => op.operationId === public_)!.op.security, [], `${public_} is public: security []`);
    }
    assert.deepEqual(Object.keys(MIRRORS).sort(), mcpTools().map((tool) => tool.name).sort(), 'every MCP tool has its operation here');
    for (const [tool, operationId] of Object.entries(MIRRORS)) assert.ok(names.has(operationId), `${tool} mirrors ${operationId}`);
    assert.deepEqual(doc.info.license, { name: 'MIT', identifier: 'MIT' });
  });

  test('codes found answered but undeclared are declared (issue 38): compile 403 plan_required, validate 503 redis_unavailable', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Op>> };
    const codes = (path: string, status: string) => doc.paths[path]!.post!.responses[status]?.content?.['application/json']?.schema.properties?.error?.enum as string[];
    assert.deepEqual(codes('/api/v1/compile', '403'), ['assets_not_allowed', 'compiler_not_available', 'plan_required']);
    assert.ok(codes('/api/v1/validate', '503').includes('redis_unavailable'));
    assert.ok(codes('/api/v2/templates/{id}/validate', '503').includes('redis_unavailable'));
    // /mcp?extensions= is declared with its one refusal.
    assert.deepEqual(codes('/mcp', '422'), ['validation_failed']);
  });

  test('every catalogue code is declared by an operation that can send it, or says why none does', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Op>> };
    const declared = new Set<string>();
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const response of Object.values(op.responses)) {
          for (const code of (response.content?.['application/json']?.schema.properties?.error?.enum ?? []) as string[]) declared.add(code);
        }
      }
    }
    const NEVER_A_STATUS: Record<string, string> = {
      job_interrupted: 'only inside a job body (GET /api/v1/jobs/{job_id} answers 200 with it)',
      rate_limit_exceeded: "SPEC's example name; the service sends rate_limit (docs/errors.md)",
    };
    // A new code goes into the `errors` list of each route whose service throws it (operations.ts).
    assert.deepEqual(ERROR_CODES.filter((code) => !declared.has(code) && !NEVER_A_STATUS[code]), []);
  });

  test('openapi.json at the repository root is fresh (npm run openapi writes it)', async () => {
    assertSameLines(await readFile(OPENAPI_FILE, 'utf8'), await openapiText(), 'openapi.json is stale: run npm run openapi');
  });
});
