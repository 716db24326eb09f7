// Real processes for the cluster test, all on loopback: API nodes and compile workers (this
// checkout, run with tsx), a private redis-server and a private PostgreSQL that the test may
// stop and start without touching the shared ones. Every wait is bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const proc = startProc(name, process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'worker'], env);
  await waitFor(`${name} to be ready`, async () => (proc.output().includes('quire worker ready') ? true : null), 90_000, proc);
  return proc;
}

/** A redis-server of our own, without persistence (a restart loses everything, like a crash). */
export class PrivateRedis {
  proc: Proc | null = null;
  constructor(readonly port: number) {}
  static async create(): Promise<PrivateRedis> {
    return new PrivateRedis(await freePort());
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.proc = startProc('redis', 'redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {});
    await waitFor('redis to answer', async () => (spawnSync('redis-cli', ['-p', String(this.port), 'ping']).stdout.toString().includes('PONG') ? true : null), 20_000, this.proc);
  }
  async stop(): Promise<void> {
    if (this.proc) await stopProc(this.proc, 'SIGKILL');
  }
}

/** A PostgreSQL cluster of our own (run as the postgres user), which the test may restart. */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}
  static async create(): Promise<PrivatePostgres> {
    const dir = await mkdtemp(join(tmpdir(), 'quire-pg-'));
    await chmod(dir, 0o777);
    const pg = new PrivatePostgres(dir, await freePort());
    const init = spawnSync('runuser', ['-u', 'postgres', '--', 'initdb', '-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres'], { encoding: 'utf8', timeout: 120_000 });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    return pg;
  }
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }
  private ctl(...args: string[]): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const run = spawnSync('runuser', ['-u', 'postgres', '--', 'pg_ctl', '-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'log'), '-w', '-t', '60', ...args], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    if (run.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed: ${run.stderr}${run.stdout}`);
  }
  start(): void {
    this.ctl('start');
  }
  /** A fast shutdown: every connection is terminated, as in a server restart. */
  stop(): void {
    this.ctl('stop', '-m', 'fast');
  }
  async destroy(): Promise<void> {
    try {
      this.ctl('stop', '-m', 'immediate');
    } catch {
      /* not running */
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
