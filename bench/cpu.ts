// Where a one-pager's CPU goes: the service's own process (HTTP, auth, quota, database, store,
// and this in-process client) against everything else it makes the machine do (bubblewrap,
// the driver, prlimit, TeX, warm engines), per compile, next to bare pdflatex's CPU for the
// same document. The machine's busy time comes from /proc/stat (a sandbox's CPU is not
// reported to its parent: bubblewrap's init reaps the job's processes), so run it on a quiet
// machine. Throughput on a saturated machine is bounded by the total: twice bare throughput
// needs it under half of bare's.
//   node --import tsx bench/cpu.ts     (BENCH_CPU_JOBS, default 100; BENCH_CPU_BARE=0 leaves bare
//   pdflatex out, to profile the service alone: perf record -a -- node --import tsx bench/cpu.ts)
import { bare } from './bare.js';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';

const JOBS = Number(process.env.BENCH_CPU_JOBS ?? 100);
const TICKS = 100;
const hello = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n% ${n}\n`;

/** CPU seconds the whole machine has been busy (every core), from /proc/stat. */
function machineCpu(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  return (fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!) / TICKS;
}
const selfCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

async function measure(label: string, work: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < 5; i++) await work(-i - 1);
  const [self0, machine0, wall0] = [selfCpu(), machineCpu(), performance.now()];
  for (let i = 0; i < JOBS; i++) await work(i);
  // The last jobs' sandboxes are torn down off the request's path.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const self = ((selfCpu() - self0) / JOBS) * 1000;
  const kids = ((machineCpu() - machine0) / JOBS) * 1000 - self;
  const wall = (performance.now() - wall0 - 500) / JOBS;
  console.log(`${label.padEnd(34)}${self.toFixed(1).padStart(10)}${kids.toFixed(1).padStart(12)}${(self + kids).toFixed(1).padStart(10)}${wall.toFixed(1).padStart(10)}`);
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-cpu-'));
  const bareRoot = await mkdtemp(join(tmpdir(), 'quire-cpu-bare-'));
  // QUIRE_* settings of the environment apply (QUIRE_PREAMBLE_CACHE_MB=0, say).
  const settings = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('QUIRE_')));
  const config = loadConfig({ ...settings, QUIRE_DATA_DIR: dataDir, QUIRE_SECRET: 'bench-secret-0123456789', LOG_LEVEL: 'silent', PORT: '0' });
  const services = await createServices(config, { log: pino({ level: 'silent' }) });
  const app = await buildApp(services);
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const { apiKey } = await services.accounts.create({ email: 'cpu@example.com', plan: 'business' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
    console.log(`\nCPU per one-pager over ${JOBS} sequential compiles, ms\n`);
    console.log(`${'case'.padEnd(34)}${'service'.padStart(10)}${'rest'.padStart(12)}${'total'.padStart(10)}${'wall'.padStart(10)}`);
    if (process.env.BENCH_CPU_BARE !== '0') await measure('bare pdflatex', async (i) => {
      const dir = join(bareRoot, `b${i + 10}`);
      await mkdir(dir);
      await writeFile(join(dir, 'main.tex'), hello(i));
      await bare(dir, 'pdflatex', ['-interaction=nonstopmode', 'main.tex']);
      await rm(dir, { recursive: true, force: true });
    });
    let seq = 1000;
    await measure('service, POST + PDF GET', async () => {
      const res = await fetch(`${address}/api/v1/compile`, { method: 'POST', headers, body: JSON.stringify({ latex: hello(++seq) }) });
      if (res.status !== 200) throw new Error(`compile answered ${res.status}: ${await res.text()}`);
      const url = new URL(((await res.json()) as { pdf_url: string }).pdf_url);
      await (await fetch(`${address}${url.pathname}${url.search}`)).arrayBuffer();
    });
  } finally {
    await app.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(bareRoot, { recursive: true, force: true });
  }
}

await main();
