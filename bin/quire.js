#!/usr/bin/env node
// Runs the built CLI; builds first when the checkout has not been built yet, or when a source
// file is newer than the build (a `git pull` since the last build would otherwise run old code).
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'quire.js');
// When the last build finished (setup.sh touches it too; tsc's incremental build leaves unchanged outputs' times alone).
const stamp = join(root, 'dist', '.built');

/** True when a TypeScript file under src/ changed after `built` (milliseconds); a few ms for the whole tree. */
function sourceNewerThan(built) {
  const src = join(root, 'src');
  if (!existsSync(src)) return false;
  return readdirSync(src, { recursive: true, withFileTypes: true }).some(
    (entry) => entry.isFile() && entry.name.endsWith('.ts') && statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs > built,
  );
}

// Build output goes to stderr: stdout may be an MCP client's (quire mcp).
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : existsSync(cli) ? statSync(cli).mtimeMs : 0;
if (!existsSync(cli) || sourceNewerThan(built)) {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
await import(cli);
