// The layering lint rule (eslint/layering.js, configured in eslint.config.js) run through
// ESLint's own Node API on the project's real config: a wrong import fails, a right one passes.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

interface Layer {
  from: string[];
  forbid: string[];
  why: string;
}

/** Messages of the layering rule for `code` linted as if it were the file `filePath`. */
async function layering(code: string, filePath: string) {
  const [result] = await eslint.lintText(code, { filePath });
  assert.ok(result, 'ESLint returned no result');
  assert.deepEqual(
    result.messages.filter((m) => m.fatal),
    [],
    'the snippet must parse',
  );
  return result.messages.filter((m) => m.ruleId === 'quire/layering');
}

describe('layering lint rule', () => {
  test('a domain module importing http/ is an error naming both modules', async () => {
    const messages = await layering("import { errorHandler } from '../http/errors.js';\nexport const f = errorHandler;\n", 'src/quota/x.ts');
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.severity, 2);
    assert.equal(messages[0]!.line, 1);
    assert.match(messages[0]!.message, /^src\/quota\/x must not import src\/http\/errors: domain modules never import http\/, mcp\/ or cli\//);
  });

  test('type-only imports, re-exports and dynamic imports of a door are errors too', async () => {
    const cases: Array<[string, string]> = [
      ["import type { App } from '../http/types.js';\nexport type A = App;\n", 'src/compile/x.ts'],
      ["export { registry } from '../../mcp/registry.js';\n", 'src/storage/migrations/x.ts'],
      ["export const load = () => import('../cli/quire.js');\n", 'src/gallery/x.ts'],
      ["export * from '../mcp/index.js';\n", 'src/accounts/x.ts'],
    ];
    for (const [code, file] of cases) {
      const messages = await layering(code, file);
      assert.equal(messages.length, 1, `${file}: ${code}`);
      assert.equal(messages[0]!.severity, 2);
    }
  });

  test('a domain module importing another domain module or a shared module is fine', async () => {
    const code = [
      "import type { Database } from '../storage/schema.js';",
      "import { limitsOf } from '../quota/plans.js';",
      "import { ServiceError } from '../errors.js';",
      'export const x: [Database | null, typeof limitsOf, typeof ServiceError] = [null, limitsOf, ServiceError];',
      '',
    ].join('\n');
    assert.deepEqual(await layering(code, 'src/quota/x.ts'), []);
    assert.deepEqual(await layering(code, 'src/templates/x.ts'), []);
  });

  test('the doors may import the domain', async () => {
    const code = "import { limitsOf } from '../quota/plans.js';\nexport const f = limitsOf;\n";
    assert.deepEqual(await layering(code, 'src/http/x.ts'), []);
    assert.deepEqual(await layering(code, 'src/mcp/x.ts'), []);
  });

  test('tex/ imports no domain module and not the HTTP error catalogue, at any depth', async () => {
    const cases: Array<[string, string]> = [
      ["import { ServiceError } from '../errors.js';\nexport const e = ServiceError;\n", 'src/tex/x.ts'],
      ["import type { Compiler } from '../quota/plans.js';\nexport type C = Compiler;\n", 'src/tex/x.ts'],
      ["import type { Compiler } from '../../quota/plans.js';\nexport type C = Compiler;\n", 'src/tex/diagnosis/x.ts'],
      ["import type { CompileService } from '../compile/service.js';\nexport type S = CompileService;\n", 'src/tex/x.ts'],
      ["import { links } from '../links.js';\nexport const l = links;\n", 'src/tex/x.ts'],
    ];
    for (const [code, file] of cases) {
      const messages = await layering(code, file);
      assert.equal(messages.length, 1, `${file}: ${code}`);
      assert.match(messages[0]!.message, /tex\/ is the bottom layer/);
    }
  });

  test('tex/ may import inside tex/ and the shared utilities', async () => {
    const code = [
      "import { sandboxed } from './sandbox.js';",
      "import type { Clock } from '../clock.js';",
      "import type { Config } from '../config.js';",
      'export const x: [typeof sandboxed, Clock | null, Config | null] = [sandboxed, null, null];',
      '',
    ].join('\n');
    assert.deepEqual(await layering(code, 'src/tex/x.ts'), []);
    // '../errors.js' from tex/diagnosis/ is tex's own errors module, not src/errors.ts.
    const own = "import { TexError } from '../errors.js';\nexport const e = TexError;\n";
    assert.deepEqual(await layering(own, 'src/tex/diagnosis/x.ts'), []);
  });

  test('no tex/ file is exempt: the queue and the runner may not throw catalogue errors', async () => {
    const code = "import { ServiceError } from '../errors.js';\nexport const e = ServiceError;\n";
    assert.equal((await layering(code, 'src/tex/queue.ts')).length, 1);
    assert.equal((await layering(code, 'src/tex/runner.ts')).length, 1);
  });

  test('a door importing another door is an error, whatever the kind of import', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["import { errorHandler } from '../http/errors.js';\nexport const f = errorHandler;\n", 'src/mcp/x.ts', /^src\/mcp\/x must not import src\/http\/errors: a door never imports another door/],
      ["import type { App } from '../../http/types.js';\nexport type A = App;\n", 'src/mcp/tools/x.ts', /^src\/mcp\/tools\/x must not import src\/http\/types/],
      ["import { createMcpServer } from '../mcp/index.js';\nexport const c = createMcpServer;\n", 'src/http/x.ts', /^src\/http\/x must not import src\/mcp\/index/],
      ["export * from '../../mcp/route.js';\n", 'src/http/pages/x.ts', /^src\/http\/pages\/x must not import src\/mcp\/route/],
      ["export const load = () => import('../http/app.js');\n", 'src/cli/x.ts', /^src\/cli\/x must not import src\/http\/app/],
      ["import { mcpTools } from '../mcp/index.js';\nexport const t = mcpTools;\n", 'src/cli/x.ts', /^src\/cli\/x must not import src\/mcp\/index/],
    ];
    for (const [code, file, message] of cases) {
      const messages = await layering(code, file);
      assert.equal(messages.length, 1, `${file}: ${code}`);
      assert.equal(messages[0]!.severity, 2);
      assert.match(messages[0]!.message, message);
    }
  });

  test('the doors share wire/, and wire/ imports no door', async () => {
    const shared = "import { ErrorBody } from '../wire/schemas.js';\nexport const e = ErrorBody;\n";
    assert.deepEqual(await layering(shared, 'src/http/x.ts'), []);
    assert.deepEqual(await layering(shared, 'src/mcp/x.ts'), []);
    assert.deepEqual(await layering(shared.replace('../wire', '../../wire'), 'src/mcp/tools/x.ts'), []);
    const up = await layering("import { mcpTools } from '../mcp/index.js';\nexport const t = mcpTools;\n", 'src/wire/x.ts');
    assert.equal(up.length, 1);
    assert.match(up[0]!.message, /^src\/wire\/x must not import src\/mcp\/index: wire\/ is shared by the doors/);
    const down = await layering("import { ErrorBody } from '../wire/schemas.js';\nexport const e = ErrorBody;\n", 'src/templates/x.ts');
    assert.equal(down.length, 1);
    assert.match(down[0]!.message, /domain modules never import/);
  });

  test('the app assembly may mount both doors', async () => {
    const code = "import { buildHttpApp } from './http/app.js';\nimport { mcpRoutes } from './mcp/route.js';\nexport const x = [buildHttpApp, mcpRoutes];\n";
    assert.deepEqual(await layering(code, 'src/app.ts'), []);
  });

  test('every folder of src/ is placed: a domain folder, a door or wire/', async () => {
    const config = (await eslint.calculateConfigForFile(join(root, 'src/x.ts'))) as { rules: Record<string, [number, { layers: Layer[] }]> };
    const layers = config.rules['quire/layering']![1].layers;
    const domain = layers.find((layer) => layer.why.startsWith('domain modules'))!.from;
    const placed = new Set(layers.flatMap((layer) => layer.from));
    const src = join(root, 'src');
    const folders = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `src/${entry.name}`);
    assert.ok(folders.length >= 15, `found only ${folders.length} folders in src/`);
    assert.deepEqual(folders.filter((folder) => !placed.has(folder)), []);
    for (const folder of ['src/jobs', 'src/webhooks', 'src/idempotency', 'src/queue']) assert.ok(domain.includes(folder), folder);
  });

  test('the newer domain folders may not import a door either', async () => {
    const code = "import { errors } from '../wire/schemas.js';\nexport const e = errors;\n";
    for (const folder of ['jobs', 'webhooks', 'idempotency', 'queue']) {
      assert.equal((await layering(code, `src/${folder}/x.ts`)).length, 1, folder);
      assert.equal((await layering(code.replace('wire/schemas', 'http/jobs'), `src/${folder}/x.ts`)).length, 1, folder);
    }
  });
});
