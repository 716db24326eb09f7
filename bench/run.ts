// `npm run bench`: the service against bare TeX, each case interleaved with its bare run so
// both see the same machine load. Cases: a one-page pdflatex compile end to end (POST plus
// PDF GET; a fresh source each time, so the result cache does not answer), the same request
// repeated (the result cache answers), xelatex and lualatex one-pagers against their bare
// engines, 16 and 64 clients against bare pdflatex run 2-parallel, and the service's RSS over
// 1,000 compiles. Goals from issue 27: one-pagers ≤ 0.30× (pdflatex), 0.25× (xelatex), 0.15×
// (lualatex); throughput ≥ 2.0× (16 clients), ≥ 1.8× with p99 ≤ 2 s (64 clients); RSS flat.
// Preamble cache: a heavy document whose preamble was seen before, and a V2 template render
// with fresh data, each against `latexmk -pdf` of the same (filled) source: ≤ 0.25× and ≤ 0.20×. Paused
// preambles: xelatex and lualatex with fontspec and unicode-math, preamble seen before, fresh
// body, against `latexmk -xelatex` / `-lualatex`: ≤ 0.20× (issue 27).
// Output option (issue 23, bench/output.ts): PDF/A-1b and encrypted hello ≤ 0.6× bare, a page image ≤ 150 ms added.
// Fair use (bench/abuse.ts): victim p95 under abuse / quiet p95, ≤ 2.
// The client commands (issue 42, bench/cli.ts): `quire compile` process start to PDF ≤ 0.5×
// `latexmk -pdf`; a `quire watch` edit-to-PDF cycle ≤ 0.3× latexmk's rerun.
import { bare } from './bare.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { createServices } from '../src/services.js';
import { cliCases } from './cli.js';
import { outputCases } from './output.js';
import { abuseCase } from './abuse.js';
import { stageHeader, stageRow, stageTotals } from './stages.js';

type Engine = 'pdflatex' | 'xelatex' | 'lualatex';
const hello = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n% ${n}\n`;
const WARMUP = 3;
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const THROUGHPUT_JOBS = Number(process.env.BENCH_THROUGHPUT_JOBS ?? 64);
const CLIENTS = 16;

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))]!;

async function time(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

let bareSeq = 0;
/** The engine as a user would run it by hand, in a fresh directory. */
async function bareEngine(root: string, engine: Engine): Promise<void> {
  const dir = join(root, `b${bareSeq++}`);
  await mkdir(dir);
  await writeFile(join(dir, 'main.tex'), hello(bareSeq));
  await bare(dir, engine, ['-interaction=nonstopmode', '-halt-on-error', 'main.tex']);
  await rm(dir, { recursive: true, force: true });
}

/** A heavy preamble (tikz, pgfplots, siunitx, hyperref, cleveref) and a contents page; `n` makes the body fresh. */
const HEAVY_PREAMBLE = [
  '\\documentclass{article}',
  '\\usepackage{tikz}',
  '\\usepackage{pgfplots}',
  '\\pgfplotsset{compat=1.18}',
  '\\usepackage{siunitx}',
  '\\usepackage{hyperref}',
  '\\usepackage{cleveref}',
  '',
].join('\n');
const heavy = (n: number) =>
  `${HEAVY_PREAMBLE}\\begin{document}\n\\tableofcontents\n\\section{Results ${n}}\\label{r}\nAs \\cref{r} shows, \\SI{${n}}{\\metre} in run ${n}.\n` +
  `\\begin{tikzpicture}\\begin{axis}\\addplot{x^2 + ${n % 7}};\\end{axis}\\end{tikzpicture}\n\\section{More}Text ${n}.\n\\end{document}\n`;
/** A V2 invoice template: a fixed, heavy-ish preamble and three placeholders. */
const V2_TEMPLATE = [
  '\\documentclass{article}',
  '\\usepackage[a4paper,margin=20mm]{geometry}',
  '\\usepackage[table]{xcolor}',
  '\\usepackage{tikz}',
  '\\usepackage{siunitx}',
  '\\usepackage{booktabs,array,fancyhdr,lastpage}',
  '\\usepackage{hyperref}',
  '\\pagestyle{fancy}\\cfoot{Page \\thepage\\ of \\pageref{LastPage}}',
  '\\begin{document}',
  '\\section*{Invoice {{ number }}}',
  'Billed to {{ customer }}.',
  '\\begin{tabular}{lr}\\toprule Item & Amount\\\\ \\midrule Work & \\SI{ {{ amount }} }{EUR}\\\\ \\bottomrule\\end{tabular}',
  '\\begin{tikzpicture}\\fill[blue!20] (0,0) rectangle (4,1);\\node at (2,0.5) {Paid};\\end{tikzpicture}',
  '\\end{document}',
  '',
].join('\n');
const v2Data = (n: number) => ({ number: `INV-${n}`, customer: `Customer ${n}`, amount: String(100 + n) });
const filled = (n: number) => {
  const data = v2Data(n);
  return V2_TEMPLATE.replace('{{ number }}', data.number).replace('{{ customer }}', data.customer).replace('{{ amount }}', data.amount);
};

/** A modern xelatex/lualatex document: fontspec and unicode-math (paused preambles, issue 27); `n` makes the body fresh. */
const UNICODE_PREAMBLE = ['\\documentclass{article}', '\\usepackage{fontspec}', '\\usepackage{unicode-math}', '\\setmathfont{Latin Modern Math}', ''].join('\n');
const unicodeDoc = (n: number) => `${UNICODE_PREAMBLE}\\begin{document}\n\\section{Note ${n}}\nFresh body ${n}: \\(\\alpha + x^{${n % 9}} = \\sum_i y_i\\), Grüße.\n\\end{document}\n`;

/** `latexmk -pdf` (or `-xelatex`, `-lualatex`) as a user would run it, in a fresh directory. */
async function bareLatexmk(root: string, source: string, mode = '-pdf'): Promise<void> {
  const dir = join(root, `m${bareSeq++}`);
  await mkdir(dir);
  await writeFile(join(dir, 'main.tex'), source);
  await bare(dir, 'latexmk', [mode, '-interaction=nonstopmode', '-halt-on-error', 'main.tex']);
  await rm(dir, { recursive: true, force: true });
}

/** A designed refusal: 503 server_busy with its Retry-After. */
class Busy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`busy, retry after ${retryAfterSeconds} s`);
  }
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
  const services = await createServices(config, { log: pino({ level: 'silent' }) });
  const app = await buildApp(services);
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const { apiKey } = await services.accounts.create({ email: 'bench@example.com', plan: 'business' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
    let seq = 0;
    const service = async (engine: Engine, source = hello(++seq), path = '/api/v1/compile', body: unknown = { latex: source, compiler: engine }) => {
      const res = await fetch(`${address}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status === 503 && res.headers.get('retry-after')) throw new Busy(Number(res.headers.get('retry-after')));
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      const { pdf_url } = (await res.json()) as { pdf_url: string };
      const url = new URL(pdf_url);
      const pdf = await fetch(`${address}${url.pathname}${url.search}`);
      if (pdf.status !== 200) throw new Error(`PDF fetch answered ${pdf.status}`);
      await pdf.arrayBuffer();
    };
    const rssStart = process.memoryUsage().rss;
    const stageLines: string[] = [];
    /** Records the stage means of `work`'s compile jobs (and the client's mean time) as one row of the stage table. */
    const staged = async (name: string, clientMs: () => number[], work: (mark: () => Promise<void>) => Promise<void>) => {
      let before = await stageTotals(services.metrics.registry);
      // Warm-ups end with mark(): the row counts only the timed runs' jobs.
      await work(async () => {
        before = await stageTotals(services.metrics.registry);
      });
      const samples = clientMs();
      stageLines.push(stageRow(name, before, await stageTotals(services.metrics.registry), samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)));
    };
    /** BENCH_CASES: a comma-separated filter on case names (a short run of some cases). */
    const wanted = (name: string) => !process.env.BENCH_CASES || process.env.BENCH_CASES.split(',').some((part) => name.includes(part));
    // (the throughput case is "throughput" to BENCH_CASES)
    let compiles = 0;

    say(`\nquire bench — ${RUNS} interleaved runs per case after ${WARMUP} warm-ups; medians\n`);
    say(`${'case'.padEnd(44)}${'service'.padStart(10)}${'bare'.padStart(10)}${'ratio'.padStart(8)}  goal`);
    // Goals from issue 27: pdflatex ≤ 0.30×, xelatex ≤ 0.25×, lualatex ≤ 0.15× bare.
    const cases: Array<[string, Engine, boolean, number]> = [
      ['hello pdflatex, POST + GET (fresh source)', 'pdflatex', false, 0.3],
      ['hello pdflatex, repeated (result cache)', 'pdflatex', true, 0.3],
      ['hello xelatex, POST + GET (fresh source)', 'xelatex', false, 0.25],
      ['hello lualatex, POST + GET (fresh source)', 'lualatex', false, 0.15],
    ];
    for (const [name, engine, repeat, goal] of process.env.BENCH_SKIP_LATENCY ? [] : cases.filter(([n]) => wanted(n))) {
      const samples = { service: [] as number[], bare: [] as number[] };
      const fixed = hello(-1);
      await staged(name, () => samples.service, async (mark) => {
      for (let i = 0; i < WARMUP + RUNS; i++) {
        if (i === WARMUP) await mark();
        const b = await time(() => bareEngine(bareRoot, engine));
        const s = await time(() => service(engine, repeat ? fixed : undefined));
        compiles++;
        if (i >= WARMUP) {
          samples.bare.push(b);
          samples.service.push(s);
        }
      }
      });
      const ratio = median(samples.service) / median(samples.bare);
      say(`${name.padEnd(44)}${`${median(samples.service).toFixed(0)} ms`.padStart(10)}${`${median(samples.bare).toFixed(0)} ms`.padStart(10)}${ratio.toFixed(2).padStart(8)}  ≤ ${goal.toFixed(2)} ${ratio <= goal ? 'MET' : 'NOT MET'}`);
    }

    // Preamble cache: the first run's preamble is built into a format in the background; the
    // bench waits for it (at most a minute) before the timed runs.
    const formatBytes = async () => Number(/^quire_preamble_cache_bytes (\d+)/m.exec(await services.metrics.registry.getSingleMetricAsString('quire_preamble_cache_bytes'))?.[1] ?? 0);
    const waitForFormat = async (before: number) => {
      const until = performance.now() + 60_000;
      while (performance.now() < until && (await formatBytes()) <= before) await new Promise((r) => setTimeout(r, 250));
    };
    const created = await fetch(`${address}/api/v2/templates`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-invoice', latex_with_placeholders: V2_TEMPLATE }) });
    if (created.status !== 201 && created.status !== 200) throw new Error(`template create answered ${created.status}: ${await created.text()}`);
    const templateId = ((await created.json()) as { template: { id: number } }).template.id;
    // Paused preambles: the second delivery of a preamble has one verified in the background;
    // the bench waits for the first to wait (at most a minute), then each slot makes its own.
    const pausedHits = async () => Number(/^quire_paused_preambles_hits_total (\d+)/m.exec(await services.metrics.registry.getSingleMetricAsString('quire_paused_preambles_hits_total'))?.[1] ?? 0);
    const primedHits = async () => Number(/^quire_preamble_cache_primed_total (\d+)/m.exec(await services.metrics.registry.getSingleMetricAsString('quire_preamble_cache_primed_total'))?.[1] ?? 0);
    const pausedWaiting = async () => Number(/^quire_paused_preambles_waiting (\d+)/m.exec(await services.metrics.registry.getSingleMetricAsString('quire_paused_preambles_waiting'))?.[1] ?? 0);
    const waitForPaused = async () => {
      const until = performance.now() + 60_000;
      while (performance.now() < until && (await pausedWaiting()) === 0) await new Promise((r) => setTimeout(r, 250));
    };
    const preambleCases: Array<[string, (n: number) => Promise<void>, (n: number) => string, string, number]> = [
      ['heavy doc, preamble seen (fresh body)', (n) => service('pdflatex', heavy(n)), heavy, '-pdf', 0.25],
      ['V2 render, fresh data', (n) => service('pdflatex', undefined, `/api/v2/templates/${templateId}/render`, { data: v2Data(n) }), filled, '-pdf', 0.2],
      ['xelatex fontspec+unicode-math, preamble seen', (n) => service('xelatex', unicodeDoc(n)), unicodeDoc, '-xelatex', 0.2],
      ['lualatex fontspec+unicode-math, preamble seen', (n) => service('lualatex', unicodeDoc(n)), unicodeDoc, '-lualatex', 0.2],
    ];
    for (const [name, run, source, mode, goal] of process.env.BENCH_SKIP_LATENCY ? [] : preambleCases.filter(([n]) => wanted(n))) {
      const samples = { service: [] as number[], bare: [] as number[] };
      const load = loadavg()[0]!;
      const paused = mode !== '-pdf';
      // A paused preamble serves the slot it was made on: every slot needs one miss first.
      const warmup = paused ? WARMUP + 2 * config.compileConcurrency : WARMUP;
      let hits = 0;
      await staged(name, () => samples.service, async (mark) => {
      for (let i = 0; i < warmup + RUNS; i++) {
        if (i === warmup) {
          await mark();
          hits = -(await (paused ? pausedHits() : primedHits()));
        }
        const n = ++seq;
        const b = await time(() => bareLatexmk(bareRoot, source(n), mode));
        const before = i === 0 ? await formatBytes() : 0;
        const s = await time(() => run(n));
        if (i === 0 && !paused) await waitForFormat(before);
        if (i === 1 && paused) await waitForPaused();
        compiles++;
        if (i >= warmup) {
          samples.bare.push(b);
          samples.service.push(s);
        }
      }
      });
      hits += await (paused ? pausedHits() : primedHits());
      const ratio = median(samples.service) / median(samples.bare);
      say(
        `${name.padEnd(44)}${`${median(samples.service).toFixed(0)} ms`.padStart(10)}${`${median(samples.bare).toFixed(0)} ms`.padStart(10)}${ratio.toFixed(2).padStart(8)}  ≤ ${goal.toFixed(2)} ${ratio <= goal ? 'MET' : 'NOT MET'} (vs latexmk ${mode}; load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; ${hits}/${RUNS} ${paused ? 'paused' : 'primed'})`,
      );
    }

    // The output option (issue 23): each case against its bare equivalent (bench/output.ts).
    const compileWith = async (body: Record<string, unknown>) => {
      const res = await fetch(`${address}/api/v1/compile`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 200) throw new Error(`compile answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
      const url = new URL(((await res.json()) as { pdf_url: string }).pdf_url);
      const pdf = await fetch(`${address}${url.pathname}${url.search}`);
      if (pdf.status !== 200) throw new Error(`PDF fetch answered ${pdf.status}`);
      await pdf.arrayBuffer();
    };
    const cli = cliCases(bareRoot, address, apiKey);
    for (const output of process.env.BENCH_SKIP_LATENCY ? [] : [...outputCases(bareRoot, compileWith), ...cli.cases].filter((c) => wanted(c.name))) {
      const samples = { service: [] as number[], bare: [] as number[] };
      await staged(output.name, () => samples.service, async (mark) => {
        for (let i = 0; i < WARMUP + RUNS; i++) {
          if (i === WARMUP) await mark();
          const n = ++seq;
          const b = await time(() => output.bare(n));
          const s = await time(() => output.service(n));
          compiles += 2;
          if (i >= WARMUP) {
            samples.bare.push(b);
            samples.service.push(s);
          }
        }
      });
      const [sm, bm] = [median(samples.service), median(samples.bare)];
      const { kind, value } = output.goal;
      const score = kind === 'ratio' ? sm / bm : sm - bm;
      const goal = kind === 'ratio' ? `≤ ${value.toFixed(2)}` : `≤ +${value} ms`;
      say(`${output.name.padEnd(44)}${`${sm.toFixed(0)} ms`.padStart(10)}${`${bm.toFixed(0)} ms`.padStart(10)}${(kind === 'ratio' ? score.toFixed(2) : `+${score.toFixed(0)}`).padStart(8)}  ${goal} ${score <= value ? 'MET' : 'NOT MET'}`);
    }

    await cli.close();

    // Fair use: its own service (budgets and result cache set for the case), about 45 s.
    if (wanted('victim p95 under abuse')) await abuseCase(say);

    // Throughput: the same number of fresh one-pagers through 16 clients, and bare 2-parallel.
    const pool = async (workers: number, jobs: number, one: () => Promise<void>, latencies?: number[]) => {
      let next = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (next++ < jobs) {
            const took = await time(one);
            latencies?.push(took);
          }
        }),
      );
      return jobs / ((performance.now() - start) / 1000);
    };
    // Throughput (issue 27): fresh one-pagers through 16 clients (≥ 2.0× bare pdflatex run
    // 2-parallel) and 64 clients (≥ 1.8×, p99 ≤ 2 s, only designed 503s), each between two
    // bare runs of the same count. The service keeps its own queue bound (8 per core): past it
    // a client gets 503 server_busy, waits its Retry-After and sends the same document again,
    // as a well-behaved client does. The rate counts delivered PDFs; p99 is of the answers
    // that delivered one (a refusal answers at once).
    const throughputCases: Array<[number, number, number | null]> = [
      [CLIENTS, 2.0, null],
      [64, 1.8, 2000],
    ];
    for (const [clients, goal, p99Goal] of throughputCases) {
      const name = `${clients} clients, fresh one-pagers`;
      if (!wanted('throughput') && !wanted(name)) continue;
      const latencies: number[] = [];
      let busy = 0;
      // Enough documents that every client sends several.
      const jobs = Math.max(THROUGHPUT_JOBS, clients * 3);
      const bareRate = await pool(2, jobs, () => bareEngine(bareRoot, 'pdflatex'));
      let serviceRate = 0;
      await staged(name, () => latencies, async () => {
        serviceRate = await pool(clients, jobs, async () => {
          const source = hello(++seq);
          for (;;) {
            const start = performance.now();
            try {
              await service('pdflatex', source);
              latencies.push(performance.now() - start);
              return;
            } catch (err) {
              if (!(err instanceof Busy)) throw err;
              busy++;
              await new Promise((resolve) => setTimeout(resolve, err.retryAfterSeconds * 1000));
            }
          }
        });
      });
      const bareRate2 = await pool(2, jobs, () => bareEngine(bareRoot, 'pdflatex'));
      compiles += jobs;
      const bareMean = (bareRate + bareRate2) / 2;
      const tput = serviceRate / bareMean;
      const tail = p99(latencies);
      const met = tput >= goal && (p99Goal === null || tail <= p99Goal);
      say(
        `${`${clients} clients, ${jobs} docs (compiles/s)`.padEnd(44)}${serviceRate.toFixed(1).padStart(10)}${bareMean.toFixed(1).padStart(10)}${tput.toFixed(2).padStart(8)}  ≥ ${goal.toFixed(2)}${p99Goal ? `, p99 ≤ ${p99Goal} ms` : ''} ${met ? 'MET' : 'NOT MET'}  (bare 2-parallel before/after: ${bareRate.toFixed(1)}/${bareRate2.toFixed(1)}; service p99 ${tail.toFixed(0)} ms; 503s ${busy})`,
      );
    }

    // RSS over many compiles (issue 27: flat over 1,000): the RSS after the first fifth of the
    // run against the end, fresh one-pagers through 8 clients.
    if (wanted('RSS')) {
      const total = Number(process.env.BENCH_RSS_COMPILES ?? 1000);
      await pool(8, Math.round(total / 5), () => service('pdflatex'));
      const settled = process.memoryUsage().rss;
      await pool(8, total - Math.round(total / 5), () => service('pdflatex'));
      compiles += total;
      const grown = process.memoryUsage().rss - settled;
      say(`RSS over ${total} compiles: ${(settled / 1048576).toFixed(1)} MB after ${Math.round(total / 5)} → ${((settled + grown) / 1048576).toFixed(1)} MB at the end (${(grown / 1048576).toFixed(1)} MB; flat = under 32 MB ${grown < 32 * 1048576 ? 'MET' : 'NOT MET'})`);
    }

    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    const rss = process.memoryUsage().rss;
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
