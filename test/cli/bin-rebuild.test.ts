// bin/quire.js builds when the checkout was never built, and again when a source file is newer
// than its last build (a `git pull` must not run old code), never otherwise: a copy of the
// launcher in a scratch checkout whose `npm run build` only counts its runs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const root = mkdtempSync(join(tmpdir(), 'quire-bin-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('bin/quire.js rebuilds exactly when a source is newer than its last build', () => {
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  copyFileSync(new URL('../../bin/quire.js', import.meta.url), join(root, 'bin', 'quire.js'));
  writeFileSync(join(root, 'src', 'cli', 'quire.ts'), '// source\n');
  // The "build" appends a line to builds.txt and writes the CLI, which prints "ran".
  const build = "const f=require('fs');f.appendFileSync('builds.txt','b\\n');f.mkdirSync('dist/src/cli',{recursive:true});f.writeFileSync('dist/src/cli/quire.js','console.log(\"ran\")')";
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', scripts: { build: `node -e "${build.replace(/"/g, '\\"')}"` } }));
  const run = () => execFileSync('node', [join(root, 'bin', 'quire.js')], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const builds = () => readFileSync(join(root, 'builds.txt'), 'utf8').split('\n').filter(Boolean).length;

  assert.equal(run(), 'ran\n');
  assert.equal(builds(), 1, 'a checkout never built is built');
  assert.equal(run(), 'ran\n');
  assert.equal(builds(), 1, 'nothing changed: no build');
  const later = new Date(Date.now() + 5000);
  utimesSync(join(root, 'src', 'cli', 'quire.ts'), later, later);
  assert.equal(run(), 'ran\n');
  assert.equal(builds(), 2, 'a newer source file: built again');
});
