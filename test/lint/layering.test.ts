// The layering lint rule (eslint/layering.js, configured in eslint.config.js) run through
// ESLint's own Node API on the project's real config: a wrong import fails, a right one passes.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { readdirSync } from 'node:fs';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });
// The folder lists as the config declares them (a specifier TypeScript does not resolve: the config is plain JS).
const configPath: string = new URL('../../eslint.config.js', import.meta.url).href;
const { DOMAIN, DOORS, WIRE } = (await import(configPath)) as Record<'DOMAIN' | 'DOORS' | 'WIRE', string[]>;

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
    const messages = await layering("import { fieldErrors } from '../http/errors.js';\nexport const f = fieldErrors;\n", 'src/quota/x.ts');
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.severity, 2);
    assert.equal(messages[0]!.line, 1);
    assert.match(messages[0]!.message, /^src\/quota\/x must not import src\/http\/errors: domain modules never import http\/, mcp\/, cli\/ or wire\//);
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
      "import { sandboxed } from './sandbox/sandbox.js';",
      "import type { Clock } from '../clock.js';",
      'export const x: [typeof sandboxed, Clock | null] = [sandboxed, null];',
      '',
    ].join('\n');
    assert.deepEqual(await layering(code, 'src/tex/x.ts'), []);
    // The configuration is read above tex/ and handed down (its image, its limits): config.ts imports tex/image/settings.ts, not the reverse.
    const config = "import type { Config } from '../../config.js';\nexport const x: Config | null = null;\n";
    assert.equal((await layering(config, 'src/tex/sandbox/x.ts')).length, 1);
    // '../errors.js' from tex/diagnosis/ is tex's own errors module, not src/errors.ts.
    const own = "import { TexError } from '../errors.js';\nexport const e = TexError;\n";
    assert.deepEqual(await layering(own, 'src/tex/diagnosis/x.ts'), []);
  });

  test('no tex/ file is exempt: the runner and the PDF merge may not throw catalogue errors', async () => {
    const code = "import { ServiceError } from '../errors.js';\nexport const e = ServiceError;\n";
    const deeper = "import { ServiceError } from '../../errors.js';\nexport const e = ServiceError;\n";
    assert.equal((await layering(deeper, 'src/tex/pdf/merge.ts')).length, 1);
    assert.equal((await layering(code, 'src/tex/runner.ts')).length, 1);
  });

  test('queue/ sits between compile/ and tex/: tex/ never imports it, it imports nothing above it', async () => {
    const up = await layering("import { domainQueue } from '../queue/domain.js';\nexport const q = domainQueue;\n", 'src/tex/x.ts');
    assert.equal(up.length, 1);
    assert.match(up[0]!.message, /tex\/ is the bottom layer/);
    for (const target of ['../compile/links.js', '../quota/plans.js', '../accounts/caller.js', '../jobs/store.js', '../http/edge.js']) {
      const messages = await layering(`import * as m from '${target}';\nexport const x = m;\n`, 'src/queue/x.ts');
      assert.equal(messages.length, 1, target);
    }
    const below = [
      "import { sandboxed } from '../tex/sandbox.js';",
      "import type { BlobStore } from '../storage/blobs.js';",
      "import { ServiceError } from '../errors.js';",
      'export const x: [typeof sandboxed, BlobStore | null, typeof ServiceError] = [sandboxed, null, ServiceError];',
      '',
    ].join('\n');
    assert.deepEqual(await layering(below, 'src/queue/x.ts'), []);
    assert.deepEqual(await layering("import { domainQueue } from '../queue/domain.js';\nexport const q = domainQueue;\n", 'src/compile/x.ts'), []);
  });

  test('a door importing another door is an error, at any depth and by any import form', async () => {
    const cases: Array<[string, string]> = [
      ["import { mcpTools } from '../mcp/index.js';\nexport const t = mcpTools;\n", 'src/http/x.ts'],
      ["import type { App } from '../../http/types.js';\nexport type A = App;\n", 'src/mcp/tools/x.ts'],
      ["export { buildHttpApp } from '../http/app.js';\n", 'src/cli/x.ts'],
      ["export const load = () => import('../cli/quire.js');\n", 'src/mcp/x.ts'],
    ];
    for (const [code, file] of cases) {
      const messages = await layering(code, file);
      assert.equal(messages.length, 1, `${file}: ${code}`);
      assert.match(messages[0]!.message, /a door never imports another door/);
    }
  });

  test('the doors share wire/, which imports no door; the domain never imports wire/', async () => {
    const shared = "import { ErrorBody } from '../wire/schemas.js';\nexport const b = ErrorBody;\n";
    assert.deepEqual(await layering(shared, 'src/http/x.ts'), []);
    assert.deepEqual(await layering(shared, 'src/mcp/x.ts'), []);
    assert.equal((await layering(shared, 'src/compile/x.ts')).length, 1);
    const up = "import { errorHandler } from '../http/errors.js';\nexport const h = errorHandler;\n";
    const messages = await layering(up, 'src/wire/x.ts');
    assert.equal(messages.length, 1);
    assert.match(messages[0]!.message, /wire\/ is shared by the doors/);
  });

  test('the quire compile client (cli/client/) loads nothing of the service but the two pure project rules it shares', async () => {
    for (const code of [
      "import { openServices } from '../../services.js';\nexport const x = openServices;\n",
      "import { expandProjectZip } from '../../compile/project-zip.js';\nexport const x = expandProjectZip;\n",
      "import { errors } from '../../errors.js';\nexport const x = errors;\n",
      "import { loadConfig } from '../../config.js';\nexport const x = loadConfig;\n",
      "export const load = () => import('../quire.js');\n",
    ]) {
      const messages = await layering(code, 'src/cli/client/x.ts');
      assert.equal(messages.length, 1, code);
      assert.match(messages[0]!.message, /the `quire compile` client talks HTTP to any Quire server/);
    }
    const allowed = [
      "import { isClutter } from '../../compile/clutter.js';",
      "import { chooseMainFile } from '../../compile/main-file.js';",
      "import { UsageError } from './project.js';",
      "import { createQuireClient } from '../../../clients/typescript/src/index.js';",
      'export const x = [isClutter, chooseMainFile, UsageError, createQuireClient];',
      '',
    ].join('\n');
    assert.deepEqual(await layering(allowed, 'src/cli/client/x.ts'), []);
  });

  test('every folder of src/ is a domain folder, a door or wire/', () => {
    const root = fileURLToPath(new URL('../../src', import.meta.url));
    const folders = readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `src/${entry.name}`);
    const known = new Set([...DOMAIN, ...DOORS, ...WIRE]);
    assert.deepEqual(folders.filter((folder) => !known.has(folder)), []);
  });
});
