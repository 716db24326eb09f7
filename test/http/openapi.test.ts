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
import { testApp, type TestApp } from '../helpers.js';

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

  test('openapi.json at the repository root is fresh (npm run openapi writes it)', async () => {
    assert.equal(await readFile(OPENAPI_FILE, 'utf8'), await openapiText(), 'openapi.json is stale: run npm run openapi');
  });
});
