// Runs one of TeX Live's tools (kpsewhich, fc-list, pdftex --version) where the compiles run:
// inside the TeX image when there is one, else on the host (QUIRE_SANDBOX=off with a host TeX
// Live). Paths the tools print are inside the image; hostPath maps them to the host.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { sandboxed, type SandboxSpec } from '../sandbox/sandbox.js';
import { runSandboxed } from '../sandbox/sandboxed.js';

const LIMITS = { cpuSeconds: 60, fileBytes: 64 * 1024 * 1024, memoryBytes: 2 * 1024 ** 3, processes: 16 };

/** What a tool's sandbox may have besides the image: a formats folder (formats.ts) and variables. */
export interface ToolOptions {
  formats?: string;
  env?: Record<string, string>;
}

/** Most bytes of a tool's stdout taken (kpsewhich -all over thousands of names prints megabytes). */
const TOOL_OUTPUT_MAX = 64 * 1024 * 1024;

function toolWorkspace(): string {
  const workspace = mkdtempSync(join(tmpdir(), 'quire-tool-'));
  chmodSync(workspace, 0o755);
  return workspace;
}

function toolSpec(workspace: string, root: string, options: ToolOptions): SandboxSpec {
  const env = { LC_ALL: 'C.UTF-8', TEXMFVAR: '/tmp/texmf-var', ...options.env };
  return { workspace, root, isolate: true, env, limits: LIMITS, ...(options.formats !== undefined ? { formats: options.formats } : {}) };
}

function command(root: string | undefined, argv: string[], options: ToolOptions = {}): { file: string; args: string[]; workspace?: string; env?: NodeJS.ProcessEnv } {
  if (root === undefined) return { file: argv[0]!, args: argv.slice(1), ...(options.env ? { env: { ...process.env, ...options.env } } : {}) };
  const workspace = toolWorkspace();
  return { ...sandboxed(toolSpec(workspace, root, options), argv), workspace };
}

/** stdout of `argv` run in the image (or on the host); throws on a non-zero exit. */
export async function imageTool(argv: string[], root: string | undefined, timeoutMs = 10_000): Promise<string> {
  return (await imageToolOutput(argv, {}, root, timeoutMs)).stdout;
}

/** A tool that failed, with what execFile's error carries: the exit code (or signal) and its output. */
export class ToolFailed extends Error {
  constructor(
    argv: string[],
    readonly code: number | null,
    readonly signal: string | null,
    readonly killed: boolean,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${argv.join(' ')}: ${killed ? 'killed' : signal ? `signal ${signal}` : `exit ${code}`}: ${stderr.trim().slice(0, 500)}`);
  }
}

/**
 * stdout and stderr of `argv` run in the image (or on the host) with `options`; throws
 * ToolFailed on a non-zero exit. In the image it starts through the launcher like every
 * sandbox (sandboxed.ts): a kpsewhich of a validate call forks no service (issue 37).
 */
export async function imageToolOutput(argv: string[], options: ToolOptions, root: string | undefined, timeoutMs = 30_000): Promise<{ stdout: string; stderr: string }> {
  if (root === undefined) {
    const env = options.env ? { env: { ...process.env, ...options.env } } : {};
    return await promisify(execFile)(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: timeoutMs, maxBuffer: TOOL_OUTPUT_MAX, ...env });
  }
  const workspace = toolWorkspace();
  try {
    const result = await runSandboxed(toolSpec(workspace, root, options), argv, { timeoutMs, maxOutput: TOOL_OUTPUT_MAX });
    const stdout = result.stdout.toString('utf8');
    if (result.code === 0 && !result.killed) return { stdout, stderr: result.stderr };
    throw new ToolFailed(argv, result.code, result.signal, result.killed !== undefined, stdout, result.stderr);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

export function imageToolSync(argv: string[], root: string | undefined, timeoutMs = 10_000): string {
  const { file, args, workspace } = command(root, argv);
  try {
    if (workspace === undefined) return execFileSync(file, args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    const result = spawnSync(file, args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`${argv.join(' ')}: ${(result.stderr || result.error?.message || '').trim()}`);
    return result.stdout;
  } finally {
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * The host path of `path` as the image sees it, following symbolic links inside the image (an
 * absolute link in the image points into the image, never at the host's file of that name).
 */
export function hostPath(path: string, root: string | undefined): string {
  if (root === undefined) return path;
  const pending = path.split('/').filter((part) => part !== '' && part !== '.');
  let resolved = '/';
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      resolved = posix.dirname(resolved);
      continue;
    }
    const next = posix.join(resolved, part);
    let target: string | null = null;
    try {
      target = readlinkSync(join(root, next));
    } catch {
      target = null;
    }
    if (target === null) {
      resolved = next;
      continue;
    }
    if (++hops > 40) throw new Error(`too many links resolving ${path}`);
    // An absolute link starts again at the image's root; a relative one at the link's folder.
    if (isAbsolute(target)) resolved = '/';
    pending.unshift(...target.split('/').filter((piece) => piece !== '' && piece !== '.'));
  }
  return join(root, resolved);
}

/**
 * `argv` as a user would run it by hand in `dir`, inside the image (or on the host without
 * one): the image bound as the root and `dir` at its own path, with no sandbox limits, uid
 * switch or copies. Bare TeX for the bench's comparisons and the tests' reference runs.
 */
export function bareCommand(dir: string, argv: string[], home: string, root: string | undefined): { file: string; args: string[] } {
  if (root === undefined) return { file: argv[0]!, args: argv.slice(1) };
  const bind = ['--ro-bind', root, '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', home, '/root', '--bind', dir, dir, '--chdir', dir];
  const env = ['--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/root', '--setenv', 'LC_ALL', 'C.UTF-8'];
  return { file: 'bwrap', args: [...bind, ...env, '--', ...argv] };
}
