#!/usr/bin/env node
// Runs the built CLI; builds first when the checkout has not been built yet.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'quire.js');
// Build output goes to stderr: stdout may be an MCP client's (quire mcp).
if (!existsSync(cli)) execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
await import(cli);
