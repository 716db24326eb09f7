// For the client command tests: a real Quire server on loopback (real TeX, a fresh SQLite
// database), project folders written from a map of files, and `quire …` run as a process
// the way a user runs it, with its own HOME so no real config is read.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { testApp, type TestApp, type TestServicesOptions } from '../helpers.js';

export const ROOT = join(import.meta.dirname, '..', '..');
/** tsx by its location: the command runs in project folders where a bare 'tsx' does not resolve. */
export const TSX = import.meta.resolve('tsx');

export interface Server extends TestApp {
  url: string;
}

export async function startServer(options: TestServicesOptions = {}): Promise<Server> {
  const t = await testApp(options);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return Object.assign(t, { url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
}

/** A temp folder holding `files` (a Uint8Array for binary content); the path. */
export async function project(files: Record<string, string | Uint8Array>, parent?: string): Promise<string> {
  const dir = parent ?? (await mkdtemp(join(tmpdir(), 'quire-project-')));
  for (const [name, data] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), data);
  }
  return dir;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An empty HOME: no ~/.config/quire of the machine's user leaks into a test. */
export async function freshHome(): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), 'quire-home-'));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

/**
 * Runs `quire args…` in `cwd` and waits for it to exit: src/cli/quire.ts through tsx, or
 * `command` (Node's arguments before `args`, such as the built bin/quire.js).
 */
export function quire(args: string[], options: { cwd?: string; env?: Record<string, string>; home: string; command?: string[] }): Promise<Run> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: options.home, ...options.env };
  const command = options.command ?? ['--import', TSX, join(ROOT, 'src', 'cli', 'quire.ts')];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command, ...args], { cwd: options.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
