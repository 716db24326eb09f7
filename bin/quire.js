#!/usr/bin/env node
// Runs the built CLI; builds first when the checkout has not been built yet.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'quire.js');
if (!existsSync(cli)) execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
await import(cli);
