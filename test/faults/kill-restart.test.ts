// A node killed with kill -9 mid-compile, then restarted as the same node (same QUIRE_NODE_NAME
// and data): the reservations its killed instance held (the monthly-quota slot and the
// in-flight slot) end at once, so a Free account at 49/50 that was compiling when the node died
// gets its 50th compile on the first try after the restart, well within 60 s, and its 51st is
// 429 rate_limit. Real server processes and real TeX, on SQLite, on PostgreSQL only, and on
// PostgreSQL + Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { openServices } from '../../src/services.js';
import { freshPostgres, HELLO } from '../helpers.js';
import { startNode, stopProc, waitFor, type Proc } from '../scale/processes.js';

const REDIS_URL = process.env.QUIRE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
/** Loops until the plan's timeout (15 s on Free): the node is killed long before. */
const LOOP = '\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n';

interface Mode {
  name: string;
  postgres: boolean;
  redis: boolean;
}

const MODES: Mode[] = [
  { name: 'SQLite', postgres: false, redis: false },
  { name: 'PostgreSQL only', postgres: true, redis: false },
  { name: 'PostgreSQL + Redis', postgres: true, redis: true },
];

describe('kill -9 mid-compile, then a restart of the same node', () => {
  const procs: Proc[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const proc of procs) await stopProc(proc, 'SIGKILL');
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  for (const mode of MODES) {
    test(`${mode.name}: the 49/50 Free account's 50th compile succeeds at once after the restart, its 51st is 429`, { timeout: 240_000 }, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'quire-kill9-'));
      await chmod(dir, 0o755);
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      let databaseUrl = `sqlite://${join(dir, 'data', 'quire.db')}`;
      if (mode.postgres) {
        const fresh = await freshPostgres();
        databaseUrl = fresh.url;
        cleanups.push(fresh.drop);
      }
      const env: Record<string, string> = {
        QUIRE_DATA_DIR: join(dir, 'data'),
        QUIRE_DATABASE_URL: databaseUrl,
        QUIRE_SECRET: 'kill9-secret-0123456789abcdef',
        QUIRE_PREAMBLE_CACHE_MB: '0',
        QUIRE_NODE_NAME: 'kill9-node',
        LOG_LEVEL: 'info',
        ...(mode.redis ? { QUIRE_REDIS_URL: REDIS_URL, QUIRE_REDIS_PREFIX: `quire-test-kill9-${randomBytes(4).toString('hex')}:` } : {}),
      };

      // The account and its usage, written straight into the node's stores (as another process).
      const seeder = await openServices(loadConfig({ ...env, QUIRE_NODE_NAME: 'seeder', LOG_LEVEL: 'silent' }), { log: pino({ level: 'silent' }) });
      let key: string;
      try {
        const { account, apiKey } = await seeder.accounts.create({ email: `kill9-${randomBytes(3).toString('hex')}@example.com`, plan: 'free' });
        key = apiKey;
        await seeder.counters.add(monthlyCompilesKey(account.id, new Date()), 49, new Date(Date.now() + 60 * 86_400_000));
      } finally {
        await seeder.close();
      }
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const compile = (url: string, latex: string) => fetch(`${url}/api/v1/compile`, { method: 'POST', headers, body: JSON.stringify({ latex }) });
      const usage = async (url: string) => (await (await fetch(`${url}/api/v1/usage`, { headers })).json()) as { used_this_month?: number; fair_use: { compiles_in_flight: number } };

      const first = await startNode(`${mode.name} node`, env);
      procs.push(first);
      const looping = compile(first.url, LOOP).catch((err: Error) => err);
      // The compile holds its reservations: the monthly slot and the one Free in-flight slot.
      await waitFor('the compile to be in flight', async () => ((await usage(first.url)).fair_use.compiles_in_flight === 1 ? true : null), 30_000, first);
      first.child.kill('SIGKILL');
      await first.exited;
      assert.ok((await looping) instanceof Error, 'the killed node never answered');

      const restartedAt = Date.now();
      const second = await startNode(`${mode.name} node, restarted`, env);
      procs.push(second);
      // The first try: the killed instance's leases ended when the node started again.
      const fiftieth = await compile(second.url, HELLO);
      const seconds = (Date.now() - restartedAt) / 1000;
      assert.equal(fiftieth.status, 200, await fiftieth.clone().text());
      assert.ok(seconds < 60, `the 50th compile ${seconds} s after the restart`);
      console.log(`${mode.name}: 50th compile delivered ${seconds.toFixed(1)} s after the restart began (first try)`);

      const fiftyFirst = await compile(second.url, HELLO);
      assert.equal(fiftyFirst.status, 429);
      const body = (await fiftyFirst.json()) as { error: string; used_this_month: number; limit: number; retryable: boolean };
      assert.deepEqual([body.error, body.used_this_month, body.limit, body.retryable], ['rate_limit', 50, 50, false]);
      await stopProc(second);
    });
  }
});
