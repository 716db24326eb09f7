// Every sandboxed process starts here: the command line of sandbox.ts (bubblewrap, prlimit),
// spawned as the spec's unprivileged uid in a process group of its own, so that one kill (a
// timeout, output past its cap, a stopped job) takes down everything the command started.
// runSandboxed runs one command to its end (SVG conversion, the PDF merge, chktex);
// launchSandboxed keeps one running for a TeX session, whose driver speaks over stdin and
// stdout. Isolated commands start through the launcher (launcher.ts), never by forking us.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { Launcher, LauncherExited, type SandboxProcess } from './launcher.js';
import { sandboxed, type SandboxSpec } from './sandbox.js';

/** stderr kept for the caller's error message. */
const STDERR_CAP = 64 * 1024;
/** How long a kill is waited for (the kernel tearing down a PID namespace). */
const GONE_MS = 2000;

/** Starts `argv` in the sandbox of `spec`, its stdin, stdout and stderr piped to us. */
export function startSandboxed(spec: SandboxSpec, argv: string[]): ChildProcessWithoutNullStreams {
  const { file, args, cwd, env } = sandboxed(spec, argv);
  return spawn(file, args, {
    ...(cwd !== undefined ? { cwd } : {}),
    env: env ?? {},
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.uid } : {}),
  });
}

/** Starts the sandboxes of TeX sessions (see launcher.ts); one helper for the whole process. */
const launcher = new Launcher();

/** How much of a long-running sandbox's stderr is kept: enough for bubblewrap's one-line complaint and then some. */
export const STDERR_HEAD = 4096;

/** A long-running sandbox (a TeX session, a warm validator), with the head of its stderr. */
export interface LaunchedSandbox extends SandboxProcess {
  /**
   * The first STDERR_HEAD bytes the sandbox wrote to its stderr (the rest is read and
   * dropped). Its driver sends its commands' output elsewhere, so what is here is bubblewrap's
   * own complaint when it could not set the sandbox up ("bwrap: …"), or the driver shell's.
   * Complete once 'close' has been emitted.
   */
  stderrHead(): string;
}

/** Keeps the first STDERR_HEAD bytes of `stream` and drains the rest (a full pipe would block the writer). */
function keepHead(child: SandboxProcess, stream: NodeJS.ReadableStream | undefined): LaunchedSandbox {
  let head = Buffer.alloc(0);
  stream?.on('data', (chunk: Buffer) => {
    if (head.length < STDERR_HEAD) head = Buffer.concat([head, chunk.subarray(0, STDERR_HEAD - head.length)]);
  });
  return Object.assign(child, { stderrHead: () => head.toString('utf8') });
}

/**
 * Starts `argv` in the sandbox of `spec` like startSandboxed, through the launcher when it
 * isolates (bubblewrap runs with an empty environment and no working directory of ours). Its
 * stderr is kept (the head of it): a sandbox that exits at once says why.
 */
export async function launchSandboxed(spec: SandboxSpec, argv: string[]): Promise<LaunchedSandbox> {
  const spawned = () => {
    const child = startSandboxed(spec, argv);
    return keepHead(child, child.stderr);
  };
  if (!spec.isolate || launcher.unavailable) return spawned();
  const { file, args } = sandboxed(spec, argv);
  // Without perl the helper cannot start: this process forks its sandboxes itself, as before.
  return launcher.launch(file, args, spec.uid, true).then(
    (child) => keepHead(child, child.stderr),
    (err: unknown) => {
      if (err instanceof LauncherExited && launcher.unavailable) return spawned();
      throw err;
    },
  );
}

/** Kills every process of a sandboxed command: its process group, and with bwrap its PID namespace. */
export function killSandboxed(child: Pick<ChildProcess, 'pid'>): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export interface RunOptions {
  stdin?: string | Buffer;
  timeoutMs: number;
  /** Most bytes of stdout taken: a command that writes more is killed. */
  maxOutput: number;
}

export interface RunResult {
  /** Exit code; null when a signal ended the command. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** The head of stderr (STDERR_CAP bytes). */
  stderr: string;
  /** Why we killed it, when we did (the first reason). */
  killed?: 'timeout' | 'output';
}

/** A started command as runSandboxed reads it: a child of ours, or one the launcher started. */
type Running = SandboxProcess & { readonly stderr?: NodeJS.ReadableStream | null | undefined; on(event: 'error', listener: (err: Error) => void): unknown };

/**
 * Starts a command that runs to its end, keeping its stderr. An isolated one starts through
 * the launcher, so that this process does not fork (issue 37: a validate call's chktex and
 * kpsewhich each blocked the event loop ~25 ms in fork).
 */
async function startToEnd(spec: SandboxSpec, argv: string[]): Promise<Running> {
  const spawned = () => startSandboxed(spec, argv) as unknown as Running;
  if (!spec.isolate || launcher.unavailable) return spawned();
  const { file, args } = sandboxed(spec, argv);
  try {
    return (await launcher.launch(file, args, spec.uid, true)) as Running;
  } catch (err) {
    if (err instanceof LauncherExited && launcher.unavailable) return spawned();
    throw err;
  }
}

/** A signal as a ChildProcess names it; the launcher reports `signal <number>`. */
function signalName(signal: string | null): NodeJS.Signals | null {
  const number = /^signal (\d+)$/.exec(signal ?? '')?.[1];
  if (number === undefined) return signal as NodeJS.Signals | null;
  const name = Object.entries(constants.signals).find(([, value]) => value === Number(number))?.[0];
  return (name ?? 'SIGKILL') as NodeJS.Signals;
}

/**
 * Runs `argv` in the sandbox of `spec` to its end, killing it at `timeoutMs` or when its
 * stdout passes `maxOutput`. Rejects only when the command cannot be started.
 */
export async function runSandboxed(spec: SandboxSpec, argv: string[], options: RunOptions): Promise<RunResult> {
  const child = await startToEnd(spec, argv);
  return new Promise((resolve, reject) => {
    const stdout: Buffer[] = [];
    let size = 0;
    let stderr = Buffer.alloc(0);
    let killed: RunResult['killed'];
    const kill = (why: NonNullable<RunResult['killed']>) => {
      killed ??= why;
      killSandboxed(child);
    };
    const timer = setTimeout(() => kill('timeout'), options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxOutput) kill('output');
      else stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_CAP) stderr = Buffer.concat([stderr, chunk.subarray(0, STDERR_CAP - stderr.length)]);
    });
    // The command may exit before it read all of its input.
    child.stdin.on('error', () => {});
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const result: RunResult = { code, signal: signalName(signal), stdout: Buffer.concat(stdout), stderr: stderr.toString('utf8') };
      resolve(killed ? { ...result, killed } : result);
    });
    child.stdin.end(options.stdin);
  });
}

/** True while a live (non-zombie) process runs as `uid`. */
async function anyProcessOf(uid: number): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const owner = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (owner === String(uid) && /^State:\s+[^Z]/m.test(status)) return true;
  }
  return false;
}

/**
 * After a kill: waits (briefly) until the kernel has taken down every process of `uid`. Only
 * for a uid that is the killed command's alone (a TeX slot's): another command of a shared
 * uid would hold the wait.
 */
export async function gone(uid: number | undefined): Promise<void> {
  if (uid === undefined) return;
  const until = performance.now() + GONE_MS;
  while (performance.now() < until && (await anyProcessOf(uid))) await new Promise((r) => setTimeout(r, 10));
}
