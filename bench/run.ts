// `npm run bench`: the service against bare TeX. Latency rows (bench/cases.ts, one table: the
// one-pagers per engine, fresh, repeated and with a first-seen preamble; the preamble caches'
// documents; the output option) run each case interleaved with its bare run, so both see the
// same machine load, and every row says which of the service's caches served its runs
// (bench/caches.ts, from the service's own counters). Then fair use (bench/abuse.ts), then
// throughput: fresh one-pagers through 16 and 64 clients over a fixed window (≥ 60 s or ≥ 500
// documents, whichever comes first) against bare pdflatex run one per core over the same
// window, half before and half after; then the service's RSS over 1,000 compiles.
// A short run: BENCH_QUICK=1 (3 runs a case, 5 s windows, 50 compiles for RSS, no fair-use
// case unless BENCH_CASES names it); BENCH_CASES=a,b picks cases by part of their name
// ("throughput" for both throughput rows); BENCH_RUNS, BENCH_THROUGHPUT_SECONDS,
// BENCH_THROUGHPUT_DOCS, BENCH_RSS_COMPILES set the counts; BENCH_LOG (a pino level, e.g. error)
// shows the service's own log, silent by default. docs/performance.md explains the
// rows; docs/performance-log.md keeps the dated runs. The client commands' rows (issue 42,
// bench/cli.ts): `quire compile` process start to PDF against `latexmk -pdf`, and a `quire watch`
// edit-to-PDF cycle against latexmk's rerun.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { createServices } from '../src/services.js';
import { abuseCase } from './abuse.js';
import { cacheLabel, cacheUse } from './caches.js';
import { cliCases } from './cli.js';
import { bareEngine, hello, latencyCases, type LatencyCase } from './cases.js';
import { stageHeader, stageRow, stageTotals } from './stages.js';

const QUICK = process.env.BENCH_QUICK === '1';
const WARMUP = QUICK ? 1 : 3;
const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 3 : 15));
/** The throughput window: it ends at this many seconds or this many delivered documents, whichever comes first. */
const WINDOW_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? (QUICK ? 5 : 60));
const WINDOW_DOCS = Number(process.env.BENCH_THROUGHPUT_DOCS ?? 500);
const RSS_COMPILES = Number(process.env.BENCH_RSS_COMPILES ?? (QUICK ? 50 : 1000));
/** Bare pdflatex runs one per core: what the machine does without the service. */
const BARE_PARALLEL = availableParallelism();

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? NaN;
const quantile = (samples: number[], q: number) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(samples.length * q))] ?? NaN;

async function time(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** A designed refusal: 503 server_busy with its Retry-After. */
class Busy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`busy, retry after ${retryAfterSeconds} s`);
  }
}

/**
 * `workers` loops of `one` until `seconds` have passed or `docs` have been done, whichever
 * first; the rate counts what was done by then (documents still in flight finish, uncounted).
 */
async function windowed(workers: number, seconds: number, docs: number, one: () => Promise<void>): Promise<{ rate: number; done: number; seconds: number }> {
  const start = performance.now();
  const until = start + seconds * 1000;
  let done = 0;
  let stoppedAt = 0;
  const over = () => stoppedAt > 0 || performance.now() >= until || done >= docs;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!over()) {
        await one();
        if (stoppedAt === 0) {
          done++;
          if (over()) stoppedAt = performance.now();
        }
      }
    }),
  );
  const elapsed = ((stoppedAt || performance.now()) - start) / 1000;
  return { rate: done / elapsed, done, seconds: elapsed };
}

/** Where this run was made: for the dated log (docs/performance-log.md). */
function machine(): string {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not a git checkout
  }
  return `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}, ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), load ${loadavg()[0]!.toFixed(1)}`;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'quire-bench-'));
  const bareRoot = await mkdtemp(join(tmpdir(), 'quire-bench-bare-'));
  // QUIRE_* settings of the environment apply (QUIRE_PAUSED_PREAMBLES=0, say), under the bench's own.
  const settings = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('QUIRE_')));
  const config = loadConfig({
    ...settings,
    QUIRE_DATA_DIR: dataDir,
    QUIRE_SECRET: 'bench-secret-0123456789',
    LOG_LEVEL: 'silent',
    PORT: '0',
    QUIRE_RENDER_PER_MINUTE: '100000',
    // Every client of the bench is one Business account (8 compiles in flight, docs/fair-use.md);
    // the throughput cases measure the service, so its in-flight limit is raised to 80. Fair use
    // has its own case (bench/abuse.ts).
    QUIRE_CALLER_CONCURRENCY_FACTOR: '10',
  });
  const services = await createServices(config, { log: pino({ level: process.env.BENCH_LOG ?? 'silent' }) });
  const app = await buildApp(services);
  const registry = services.metrics.registry;
  const say = (line: string) => console.log(line);
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const { apiKey } = await services.accounts.create({ email: 'bench@example.com', plan: 'business' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
    /** POST, then GET the PDF: what a client waits for. A designed 503 throws Busy. */
    const call = async (body: Record<string, unknown>, path = '/api/v1/compile') => {
      const res = await fetch(`${address}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status === 503 && res.headers.get('retry-after')) throw new Busy(Number(res.headers.get('retry-after')));
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
      const url = new URL(((await res.json()) as { pdf_url: string }).pdf_url);
      const pdf = await fetch(`${address}${url.pathname}${url.search}`);
      if (pdf.status !== 200) throw new Error(`PDF fetch answered ${pdf.status}`);
      await pdf.arrayBuffer();
    };
    const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await registry.getSingleMetricAsString(name))?.[1] ?? 0);
    const waitUntil = async (done: () => Promise<boolean>) => {
      const until = performance.now() + 60_000;
      while (performance.now() < until && !(await done())) await new Promise((r) => setTimeout(r, 250));
    };
    const rssStart = process.memoryUsage().rss;
    const stageLines: string[] = [];
    /** Records the stage means of `work`'s compile jobs (and the client's mean time) as one row of the stage table. */
    const staged = async (name: string, clientMs: () => number[], work: (mark: () => Promise<void>) => Promise<void>) => {
      let before = await stageTotals(registry);
      // Warm-ups end with mark(): the row counts only the timed runs' jobs.
      await work(async () => {
        before = await stageTotals(registry);
      });
      const samples = clientMs();
      stageLines.push(stageRow(name, before, await stageTotals(registry), samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)));
    };
    /** BENCH_CASES: a comma-separated filter on case names (a short run of some cases). */
    const wanted = (name: string) => !process.env.BENCH_CASES || process.env.BENCH_CASES.split(',').some((part) => name.includes(part));

    say(`\nquire bench — ${machine()}${QUICK ? ' — QUICK (short counts: not figures to quote)' : ''}`);
    say(`${RUNS} interleaved runs per case after warm-ups; medians; each row's cache hits are the service's own counters\n`);
    say(`${'case'.padEnd(44)}${'service'.padStart(10)}${'bare'.padStart(10)}${'ratio'.padStart(8)}  goal`);
    const cases = latencyCases({
      bareRoot,
      call,
      formatBytes: () => gauge('quire_preamble_cache_bytes'),
      waitForFormat: (before) => waitUntil(async () => (await gauge('quire_preamble_cache_bytes')) > before),
      waitForPaused: () => waitUntil(async () => (await gauge('quire_paused_preambles_waiting')) > 0),
      createTemplate: async (name, latex) => {
        const created = await fetch(`${address}/api/v2/templates`, { method: 'POST', headers, body: JSON.stringify({ name, latex_with_placeholders: latex }) });
        if (created.status !== 201 && created.status !== 200) throw new Error(`template create answered ${created.status}: ${await created.text()}`);
        return ((await created.json()) as { template: { id: number } }).template.id;
      },
      slots: config.compileConcurrency,
      warmup: WARMUP,
    });
    const cli = cliCases(bareRoot, address, apiKey);
    cases.push(...cli.cases);
    let seq = 0;
    const latencyRow = async (c: LatencyCase) => {
      const samples = { service: [] as number[], bare: [] as number[] };
      const load = loadavg()[0]!;
      const warmup = c.warmup ?? WARMUP;
      await c.prepare?.();
      let hitsBefore = await cacheUse(registry);
      await staged(c.name, () => samples.service, async (mark) => {
        for (let i = 0; i < warmup + RUNS; i++) {
          if (i === warmup) {
            await mark();
            hitsBefore = await cacheUse(registry);
          }
          const n = ++seq;
          const b = await time(() => c.bare(n));
          const s = await time(() => c.service(n));
          if (i < warmup) await c.afterRun?.(i);
          if (i >= warmup) {
            samples.bare.push(b);
            samples.service.push(s);
          }
        }
      });
      const used = cacheLabel(hitsBefore, await cacheUse(registry));
      const [sm, bm] = [median(samples.service), median(samples.bare)];
      const kind = c.goal?.kind ?? 'ratio';
      const score = kind === 'ratio' ? sm / bm : sm - bm;
      const verdict = c.goal ? `${kind === 'ratio' ? `≤ ${c.goal.value.toFixed(2)}` : `≤ +${c.goal.value} ms`} ${score <= c.goal.value ? 'MET' : 'NOT MET'}` : 'no goal';
      const notes = [c.versus ? `vs ${c.versus}` : '', used, `load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`].filter(Boolean).join('; ');
      say(`${c.name.padEnd(44)}${`${sm.toFixed(0)} ms`.padStart(10)}${`${bm.toFixed(0)} ms`.padStart(10)}${(kind === 'ratio' ? score.toFixed(2) : `${score >= 0 ? '+' : ''}${score.toFixed(0)}`).padStart(8)}  ${verdict} (${notes})`);
    };
    if (!process.env.BENCH_SKIP_LATENCY) for (const c of cases.filter((x) => wanted(x.name))) await latencyRow(c);
    await cli.close();

    // Fair use: its own service (budgets and result cache set for the case), about 45 s.
    if (QUICK ? !!process.env.BENCH_CASES && wanted('victim p95 under abuse') : wanted('victim p95 under abuse')) await abuseCase(say);

    // Throughput (issue 27): fresh one-pagers through 16 clients (≥ 2.0× bare pdflatex run one
    // per core) and 64 clients (≥ 1.8×, p99 ≤ 2 s, only designed 503s), over the window, bare
    // over half the window before and half after. The service keeps its own queue bound (8 per
    // core): past it a client gets 503 server_busy, waits its Retry-After and sends the same
    // document again, as a well-behaved client does. The rate counts delivered PDFs. Two
    // latencies: the p99 of the attempts that delivered a PDF (the goal's), and the time to
    // PDF of each document, first attempt to PDF, refusals and Retry-After waits included.
    const throughputCases: Array<[number, number, number | null]> = [
      [16, 2.0, null],
      [64, 1.8, 2000],
    ];
    for (const [clients, goal, p99Goal] of throughputCases) {
      const name = `${clients} clients, fresh one-pagers`;
      if (!wanted('throughput') && !wanted(name)) continue;
      const delivering: number[] = [];
      const toPdf: number[] = [];
      let busy = 0;
      let waited = 0;
      const bareOne = () => bareEngine(bareRoot, 'pdflatex');
      const bareBefore = await windowed(BARE_PARALLEL, WINDOW_SECONDS / 2, Math.ceil(WINDOW_DOCS / 2), bareOne);
      let served = { rate: 0, done: 0, seconds: 0 };
      const hitsBefore = await cacheUse(registry);
      await staged(name, () => delivering, async () => {
        served = await windowed(clients, WINDOW_SECONDS, WINDOW_DOCS, async () => {
          const source = hello(++seq);
          const first = performance.now();
          for (;;) {
            const start = performance.now();
            try {
              await call({ latex: source, compiler: 'pdflatex' });
              delivering.push(performance.now() - start);
              toPdf.push(performance.now() - first);
              return;
            } catch (err) {
              if (!(err instanceof Busy)) throw err;
              busy++;
              waited += err.retryAfterSeconds;
              await new Promise((resolve) => setTimeout(resolve, err.retryAfterSeconds * 1000));
            }
          }
        });
      });
      const used = cacheLabel(hitsBefore, await cacheUse(registry));
      const bareAfter = await windowed(BARE_PARALLEL, WINDOW_SECONDS / 2, Math.ceil(WINDOW_DOCS / 2), bareOne);
      const bareRate = (bareBefore.done + bareAfter.done) / (bareBefore.seconds + bareAfter.seconds);
      const tput = served.rate / bareRate;
      const tail = quantile(delivering, 0.99);
      const met = tput >= goal && (p99Goal === null || tail <= p99Goal);
      say(
        `${`${clients} clients, ${served.done} docs in ${served.seconds.toFixed(0)} s (PDF/s)`.padEnd(44)}${served.rate.toFixed(1).padStart(10)}${bareRate.toFixed(1).padStart(10)}${tput.toFixed(2).padStart(8)}  ≥ ${goal.toFixed(2)}${p99Goal ? `, p99 of delivering attempts ≤ ${p99Goal} ms` : ''} ${met ? 'MET' : 'NOT MET'}` +
          `  (p99 of delivering attempts ${tail.toFixed(0)} ms; time to PDF, refusals and waits included: p50 ${quantile(toPdf, 0.5).toFixed(0)} ms, p99 ${quantile(toPdf, 0.99).toFixed(0)} ms; ` +
          `503s ${busy}, ${waited} s of Retry-After waited; bare ${BARE_PARALLEL}-parallel before/after: ${bareBefore.rate.toFixed(1)}/${bareAfter.rate.toFixed(1)} over ${bareBefore.done}+${bareAfter.done} docs; ${used})`,
      );
    }

    // RSS over many compiles (issue 27: flat over 1,000): the RSS after the first fifth of the
    // run against the end, fresh one-pagers through 8 clients.
    if (wanted('RSS')) {
      const total = RSS_COMPILES;
      const fresh = () => call({ latex: hello(++seq), compiler: 'pdflatex' });
      await windowed(8, Infinity, Math.round(total / 5), fresh);
      const settled = process.memoryUsage().rss;
      await windowed(8, Infinity, total - Math.round(total / 5), fresh);
      const grown = process.memoryUsage().rss - settled;
      say(`RSS over ${total} compiles: ${(settled / 1048576).toFixed(1)} MB after ${Math.round(total / 5)} → ${((settled + grown) / 1048576).toFixed(1)} MB at the end (${(grown / 1048576).toFixed(1)} MB; flat = under 32 MB ${grown < 32 * 1048576 ? 'MET' : 'NOT MET'})`);
    }

    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    const rss = process.memoryUsage().rss;
    const { compiles } = await cacheUse(registry);
    say(`service RSS: ${mb(rssStart)} → ${mb(rss)} over ${compiles} compiles (peak ${mb(process.resourceUsage().maxRSS * 1024)}); growth ${mb(rss - rssStart)}`);
    say(`\n${stageHeader()}`);
    for (const line of stageLines) say(line);
    say(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the machine is shared: other work skews both columns)\n`);
  } finally {
    await app.close();
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(bareRoot, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
