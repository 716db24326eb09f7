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

test('a client command runs the bundle, and rebuilds only when one of the sources it was made of is newer', () => {
  const dir = mkdtempSync(join(root, 'client-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'src', 'cli', 'client'), { recursive: true });
  copyFileSync(new URL('../../bin/quire.js', import.meta.url), join(dir, 'bin', 'quire.js'));
  writeFileSync(join(dir, 'src', 'cli', 'client', 'index.ts'), '// bundled\n');
  writeFileSync(join(dir, 'src', 'other.ts'), '// not in the bundle\n');
  // The "build" counts its runs and writes the operator CLI and the client bundle with its inputs.
  const build = [
    "const f=require('fs');f.appendFileSync('builds.txt','b\\n');",
    "f.mkdirSync('dist/src/cli',{recursive:true});f.writeFileSync('dist/src/cli/quire.js','console.log(\"operator\")');",
    "f.mkdirSync('dist/cli',{recursive:true});f.writeFileSync('dist/cli/client.js','export async function runClient(a){console.log(\"client \"+a.join(\" \"));return 0}');",
    "f.writeFileSync('dist/cli/inputs.json',JSON.stringify(['src/cli/client/index.ts']))",
  ].join('');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', scripts: { build: `node -e "${build.replace(/"/g, '\\"')}"` } }));
  const run = (...args: string[]) => execFileSync('node', [join(dir, 'bin', 'quire.js'), ...args], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const builds = () => readFileSync(join(dir, 'builds.txt'), 'utf8').split('\n').filter(Boolean).length;

  assert.equal(run('compile', 'x'), 'client compile x\n');
  assert.equal(builds(), 1, 'never built: built');
  assert.equal(run('watch'), 'client watch\n');
  assert.equal(run('login'), 'client login\n');
  assert.equal(run('account', 'list'), 'operator\n');
  assert.equal(builds(), 1, 'nothing changed: no build');
  const later = new Date(Date.now() + 5000);
  utimesSync(join(dir, 'src', 'other.ts'), later, later);
  assert.equal(run('compile'), 'client compile\n');
  assert.equal(builds(), 1, 'a source outside the bundle: the client command does not wait for a build');
  assert.equal(run('account', 'list'), 'operator\n');
  assert.equal(builds(), 2, '…the operator command builds');
  const latest = new Date(Date.now() + 10_000);
  utimesSync(join(dir, 'src', 'cli', 'client', 'index.ts'), latest, latest);
  assert.equal(run('compile'), 'client compile\n');
  assert.equal(builds(), 3, "a source of the bundle: built before the client command runs");
});

test("bin/quire.js's list of client commands is src/cli/client/commands.ts's", async () => {
  const { CLIENT_COMMANDS } = await import('../../src/cli/client/commands.js');
  const bin = readFileSync(new URL('../../bin/quire.js', import.meta.url), 'utf8');
  assert.deepEqual(JSON.parse(/const CLIENT_COMMANDS = (\[[^\]]*\]);/.exec(bin)![1]!.replace(/'/g, '"')), [...CLIENT_COMMANDS]);
});
