// `npm run bench`: end-to-end latency of a one-page compile through the real service (a
// listening server, HTTP POST, then fetching the PDF) against a bare `pdflatex` of the same
// source in a temp dir. Goal: ratio of medians ≤ 1.2.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { createServices } from '../src/services.js';

const SOURCE = '\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n';
const WARMUP = 3;
const RUNS = Number(process.env.BENCH_RUNS ?? 20);

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    median: at(0.5),
    p90: at(0.9),
    min: sorted[0]!,
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

async function time(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function bare(dir: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('pdflatex', ['-interaction=nonstopmode', '-halt-on-error', 'main.tex'], { cwd: dir, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`pdflatex exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-bench-'));
  const bareDir = await mkdtemp(join(tmpdir(), 'quire-bench-bare-'));
  await writeFile(join(bareDir, 'main.tex'), SOURCE);
  const config = loadConfig({ QUIRE_DATA_DIR: dataDir, QUIRE_SECRET: 'bench-secret-0123456789', LOG_LEVEL: 'silent', PORT: '0' });
  const services = await createServices(config, { log: pino({ level: 'silent' }) });
  const app = await buildApp(services);
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const { apiKey } = await services.accounts.create({ email: 'bench@example.com', plan: 'business' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
    const body = JSON.stringify({ latex: SOURCE });

    let pdfBytes = 0;
    const service = async () => {
      const res = await fetch(`${address}/api/v1/compile`, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`compile answered ${res.status}: ${await res.text()}`);
      const { pdf_url } = (await res.json()) as { pdf_url: string };
      const url = new URL(pdf_url);
      const pdf = await fetch(`${address}${url.pathname}${url.search}`);
      if (pdf.status !== 200) throw new Error(`PDF fetch answered ${pdf.status}`);
      pdfBytes = (await pdf.arrayBuffer()).byteLength;
    };

    // Interleaved, so both see the same machine load.
    const samples = { bare: [] as number[], service: [] as number[] };
    let rssBefore = 0;
    for (let i = 0; i < WARMUP + RUNS; i++) {
      // Memory from the first measured run, so warm-up allocations don't count as growth.
      if (i === WARMUP) rssBefore = process.memoryUsage().rss;
      const b = await time(() => bare(bareDir));
      const s = await time(service);
      if (i >= WARMUP) {
        samples.bare.push(b);
        samples.service.push(s);
      }
    }
    const rows = [
      ['bare pdflatex (1 pass, no sandbox)', stats(samples.bare)],
      ['Quire: POST /compile + GET PDF', stats(samples.service)],
    ] as const;
    const ms = (n: number) => `${n.toFixed(1)} ms`.padStart(10);
    console.log(`\nOne-page document, ${RUNS} runs each after ${WARMUP} warm-ups (PDF ${pdfBytes} bytes)\n`);
    console.log(`${'what'.padEnd(38)}${'median'.padStart(10)}${'p90'.padStart(10)}${'min'.padStart(10)}${'mean'.padStart(10)}`);
    for (const [name, s] of rows) console.log(`${name.padEnd(38)}${ms(s.median)}${ms(s.p90)}${ms(s.min)}${ms(s.mean)}`);
    const ratio = rows[1][1].median / rows[0][1].median;
    console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine skews both columns)`);
    console.log(`ratio (median service / median bare): ${ratio.toFixed(2)}  goal ≤ 1.20  ${ratio <= 1.2 ? 'MET' : 'NOT MET'}`);
    // The service process (HTTP, database, PDF store, pool) over the measured compiles: TeX itself
    // runs in child processes, so growth here would be a leak in the service.
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    const growth = process.memoryUsage().rss - rssBefore;
    console.log(
      `service process memory: RSS ${mb(rssBefore)} → ${mb(process.memoryUsage().rss)} over ${RUNS} compiles ` +
        `(peak ${mb(process.resourceUsage().maxRSS * 1024)}); growth ${mb(growth)}  goal < 20 MB  ${growth < 20 * 1024 * 1024 ? 'MET' : 'NOT MET'}\n`,
    );
  } finally {
    await app.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(bareDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
