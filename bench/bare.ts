// Bare TeX for the bench's comparisons: the command as a user would type it, run in the same
// TeX image the service uses (the host has no TeX Live of its own), with a home that persists
// across runs, so lualatex's font cache is as warm as a user's.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareCommand } from '../src/tex/image/tools.js';
import { defaultImageRoot } from '../src/tex/image/default.js';

const HOME = join(tmpdir(), 'quire-bench-home');

/** Runs `cmd args…` bare in `dir`; resolves on exit 0 (or one of `ok`). */
export function bare(dir: string, cmd: string, args: string[], ok: number[] = [0]): Promise<void> {
  mkdirSync(HOME, { recursive: true });
  const { file, args: argv } = bareCommand(dir, [cmd, ...args], HOME, defaultImageRoot());
  return new Promise<void>((resolve, reject) => {
    const child = spawn(file, argv, { cwd: dir, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (ok.includes(code ?? -1) ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}
