// Real processes for the cluster test, all on loopback: API nodes and compile workers (this
// checkout, run with tsx). Private PostgreSQL and Redis servers are in ../faults/servers.ts.
// Every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../browser.js';

export interface Proc {
  name: string;
  child: ChildProcess;
  output(): string;
  alive(): boolean;
  exited: Promise<number | null>;
}

export function startProc(name: string, command: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { name, child, output: () => output, alive: () => child.exitCode === null && child.signalCode === null, exited };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined>, ms: number, proc?: Proc): Promise<T> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (proc && !proc.alive()) throw new Error(`${proc.name} exited while waiting for ${what}:\n${proc.output().slice(-3000)}`);
    const value = await probe().catch(() => null);
    if (value !== null && value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${proc ? `:\n${proc.output().slice(-3000)}` : ''}`);
}

export async function stopProc(proc: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!proc.alive()) return;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 20_000);
  await proc.exited;
  clearTimeout(timer);
}

/** An API node (`src/server.ts`) answering /health on its port. */
export async function startNode(name: string, env: Record<string, string>): Promise<Proc & { port: number; url: string }> {
  const port = await freePort();
  const proc = startProc(name, process.execPath, ['--import', 'tsx', 'src/server.ts'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${name} to listen`, async () => ((await fetch(`${url}/health`)).status > 0 ? true : null), 90_000, proc);
  return Object.assign(proc, { port, url });
}

/** A compile worker (`quire worker`), ready once it says so. */
export async function startWorker(name: string, env: Record<string, string>): Promise<Proc> {
  // Port 0: several workers on this host each serve /health and /metrics on a free port.
  const proc = startProc(name, process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'worker'], { QUIRE_WORKER_PORT: '0', ...env });
  await waitFor(`${name} to be ready`, async () => (proc.output().includes('quire worker ready') ? true : null), 90_000, proc);
  return proc;
}
