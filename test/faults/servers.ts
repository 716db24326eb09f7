// Private PostgreSQL and Redis servers that a fault test may stop and restart at will, on
// their own ports and data dirs, so the shared ones (5432, 6379) used by every other test are
// never touched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';

const run = promisify(execFile);

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function until(what: string, ready: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up within ${ms} ms`);
}

export interface PrivatePostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data dir. */
  destroy(): Promise<void>;
}

async function pgBin(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
  return join('/usr/lib/postgresql', versions[0]!, 'bin');
}

/** initdb + pg_ctl as the postgres user in a temp dir, trust auth on 127.0.0.1:<port>. */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = await pgBin();
  const dir = await mkdtemp(join(tmpdir(), 'quire-pg-'));
  const { stdout } = await run('id', ['-u', 'postgres']);
  const uid = Number(stdout.trim());
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  await chown(dir, uid, Number(gid.trim()));
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { timeout: 60_000 });
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const up = async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    await client.end();
    return true;
  };
  const start = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    await until('private PostgreSQL', up);
  };
  const stop = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  return {
    url,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGKILL: the connection drops without a goodbye, like a crashed server. */
  kill(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await until('private Redis', async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    });
  };
  const kill = async () => {
    const current = child;
    if (!current || current.exitCode !== null) return;
    const exited = new Promise((r) => current.once('exit', r));
    current.kill('SIGKILL');
    await exited;
    child = null;
  };
  await start();
  return { url, port, kill, start, destroy: kill };
}
