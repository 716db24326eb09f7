#!/usr/bin/env node
// Runs the built CLI; builds first when the checkout has not been built yet, or when a source
// file is newer than the build (a `git pull` since the last build would otherwise run old code).
// The client commands (compile, watch, login) run their bundle, dist/cli/client.js
// (scripts/build-cli.mjs), and check only the sources it was made of: `quire compile` is
// measured from the process start (docs/performance.md), and a walk of src/ costs 4-10 ms.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'quire.js');
const clientBundle = join(root, 'dist', 'cli', 'client.js');
/** The bundle's sources, relative to the root (written by scripts/build-cli.mjs). */
const clientInputs = join(root, 'dist', 'cli', 'inputs.json');
/** Kept in step with src/cli/client/commands.ts (test/cli/bin-rebuild.test.ts checks). */
const CLIENT_COMMANDS = ['compile', 'watch', 'login'];
// When the last build finished (setup.sh touches it too; tsc's incremental build leaves unchanged outputs' times alone).
const stamp = join(root, 'dist', '.built');

/** Milliseconds since the epoch of `path`'s last change; Infinity when it is gone (a build decides). */
function changed(path) {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity;
}

/** True when a TypeScript file under src/ changed after `built` (milliseconds); a few ms for the whole tree. */
function sourceNewerThan(built) {
  const src = join(root, 'src');
  if (!existsSync(src)) return false;
  return readdirSync(src, { recursive: true, withFileTypes: true }).some(
    (entry) => entry.isFile() && entry.name.endsWith('.ts') && statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs > built,
  );
}

/** Whether a client command can run the bundle as built: every source it was made of is older than the build. */
function bundleFresh(built) {
  if (!existsSync(clientBundle) || !existsSync(clientInputs)) return false;
  // An installed package without its sources has nothing to be newer than the build.
  if (!existsSync(join(root, 'src'))) return true;
  const inputs = JSON.parse(readFileSync(clientInputs, 'utf8'));
  return inputs.every((path) => changed(join(root, path)) <= built);
}

// Build output goes to stderr: stdout may be an MCP client's (quire mcp).
const args = process.argv.slice(2);
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : existsSync(cli) ? statSync(cli).mtimeMs : 0;
const client = CLIENT_COMMANDS.includes(args[0]) && bundleFresh(built);
if (!client && (!existsSync(cli) || sourceNewerThan(built))) {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
if (CLIENT_COMMANDS.includes(args[0]) && existsSync(clientBundle)) {
  const { runClient } = await import(clientBundle);
  process.exitCode = await runClient(args);
} else {
  await import(cli);
}
