// Bench case "victim p95 under abuse / quiet p95" (issue 26), the bench's version of
// test/scale/abuse.test.ts: its own service (result cache off, failure budgets at a fifth so
// one timeout spends them), a Pro account compiling a fresh one-pager every second, quiet and
// then while a keyless address and a Free account each loop documents that run to their 15 s
// timeout, three at a time, retrying 250 ms after every 429. Goal: ≤ 2.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';

const LOOP = '\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n';
const QUIET_MS = 12_000;
const ABUSE_MS = 30_000;
const PARALLEL = 3;

const p95 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.ceil(samples.length * 0.95) - 1)]!;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the case and prints its row through `say`. */
export async function abuseCase(say: (line: string) => void): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-bench-abuse-'));
  const config = loadConfig({
    QUIRE_DATA_DIR: dataDir,
    QUIRE_SECRET: 'bench-secret-0123456789',
    LOG_LEVEL: 'silent',
    QUIRE_FAILURE_BUDGET_FACTOR: '0.2',
    QUIRE_RESULT_CACHE_ENTRIES: '0',
    // A public service's setting (docs/fair-use.md): long free jobs yield the CPU.
    QUIRE_DEMOTE_AFTER_MS: process.env.QUIRE_DEMOTE_AFTER_MS ?? '1000',
  });
  const services = await createServices(config, { log: pino({ level: 'silent' }) });
  const app = await buildApp(services);
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const bearer = async (plan: 'free' | 'pro', email: string) => ({ authorization: `Bearer ${(await services.accounts.create({ email, plan })).apiKey}` });
    const [free, pro] = [await bearer('free', 'abuse-free@example.com'), await bearer('pro', 'abuse-pro@example.com')];
    const post = (latex: string, headers: Record<string, string> = {}) =>
      fetch(`${address}/api/v1/compile`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ latex }) });
    let seq = 0;
    const victim = async (ms: number) => {
      const times: number[] = [];
      let failures = 0;
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const started = performance.now();
        const res = await post(`\\documentclass{article}\n\\begin{document}\nHello ${++seq}.\n\\end{document}\n`, pro);
        times.push((performance.now() - started) / 1000);
        if (res.status !== 200) failures++;
        await res.arrayBuffer();
        await pause(Math.max(0, 1000 - (performance.now() - started)));
      }
      return { times, failures };
    };

    await victim(3_000);
    const quiet = await victim(QUIET_MS);
    const stop = Date.now() + ABUSE_MS;
    let refused = 0;
    const attacker = async (headers: Record<string, string>) => {
      while (Date.now() < stop) {
        const res = await post(LOOP, headers);
        await res.arrayBuffer();
        if (res.status === 429) {
          refused++;
          await pause(250);
        }
      }
    };
    const attackers = [...Array(PARALLEL)].flatMap(() => [attacker({}), attacker(free)]);
    const loud = await victim(ABUSE_MS);
    await Promise.all(attackers);
    const ratio = p95(loud.times) / p95(quiet.times);
    say(
      `${'victim p95 under abuse / quiet p95'.padEnd(44)}${ratio.toFixed(2).padStart(28)}  ≤ 2.00 ${ratio <= 2 ? 'MET' : 'NOT MET'}  (quiet ${p95(quiet.times).toFixed(2)} s over ${quiet.times.length}, under abuse ${p95(loud.times).toFixed(2)} s over ${loud.times.length}; victim failures ${quiet.failures + loud.failures}; attackers refused ${refused}; load ${loadavg()[0]!.toFixed(1)})`,
    );
  } finally {
    await app.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
