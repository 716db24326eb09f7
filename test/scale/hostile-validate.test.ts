// /health stays quick while hostile requests run (issue 37, item 1): a real server process
// (src/server.ts, real TeX, its own event loop) and real HTTP clients. Twenty keyless clients,
// each its own address (X-Forwarded-For with QUIRE_TRUST_PROXY), loop validate calls with the
// shapes that once held the event loop for up to a minute: three 2,000-character \usepackage
// names, 300 missing \usepackage names, 29,000 \input lines (283 KB). Beside them, hostile
// compiles (300 missing packages, so the diagnosis looks for the closest names) and gallery
// renders with 2,000-character fields. /health is asked every 50 ms. The canary: the hostile
// calls were answered (200 with their findings, not refused), so the load was real.
//
// The bound is issue 37's goal, 250 ms at p99. Before the fixes these requests held the event
// loop for 42-60 s; on 2026-12-04, with each validate sandbox (chktex, kpsewhich) forked by
// the service itself, /health answered at p99 570-860 ms on a quiet 2-core machine. Since they
// start through tex/sandbox/launcher.ts (a small Perl helper forks, never the service), three
// runs on a quiet machine gave p50 35-47 ms, p99 111-176 ms, max 214-313 ms (2026-12-05).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startNode, stopProc, type Proc } from './processes.js';

const run = promisify(execFile);

const CLIENTS = 20;
const ATTACK_MS = 30_000;
const P99_BOUND_MS = 250;

const doc = (preamble: string[], body: string[] = []) => ['\\documentclass{article}', ...preamble, '\\begin{document}', ...body, '\\end{document}', ''].join('\n');
const LONG_NAMES = doc(['a', 'b', 'c'].map((c) => `\\usepackage{${c.repeat(2000)}}`));
const MANY_NAMES = doc(Array.from({ length: 300 }, (_, i) => `\\usepackage{qnopkg${i}x}`));
const MANY_INPUTS = doc([], Array.from({ length: 29_000 }, () => '\\input{a}'));
const HOSTILE_VALIDATES = [LONG_NAMES, MANY_NAMES, MANY_INPUTS].map((latex) => JSON.stringify({ latex }));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
}

describe('/health under hostile validate, compile and render requests', () => {
  let node: Proc & { url: string };
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quire-hostile-'));
    node = await startNode('hostile', {
      QUIRE_DATA_DIR: dir,
      QUIRE_SECRET: 'hostile-secret-0123456789abcdef',
      QUIRE_TRUST_PROXY: 'true',
      QUIRE_VALIDATE_PER_MINUTE: '100000',
      QUIRE_LOG_LEVEL: 'warn',
    });
  });
  after(async () => {
    await stopProc(node);
    rmSync(dir, { recursive: true, force: true });
  });

  // Bodies are serialised once: the clients' own work must not slow the measurement.
  const post = (path: string, body: string, client: number) =>
    fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.18.${Math.floor(client / 200)}.${client % 200 + 1}` }, body });

  /** /health latencies, measured by a process of its own (this one is busy with the clients). */
  async function healthSamples(ms: number): Promise<number[]> {
    const script = `const end = Date.now() + ${ms}; const out = [];
      (async () => { while (Date.now() < end) { const t = performance.now(); const r = await fetch('${node.url}/health'); await r.arrayBuffer();
        out.push(performance.now() - t); await new Promise((r) => setTimeout(r, 50)); } console.log(JSON.stringify(out)); })();`;
    const { stdout } = await run(process.execPath, ['-e', script], { timeout: ms + 120_000 });
    return JSON.parse(stdout) as number[];
  }

  test(`${CLIENTS} hostile validate clients with compiles and renders: /health p99 under ${P99_BOUND_MS} ms`, async () => {
    const sample = (await (await fetch(`${node.url}/api/v1/public_templates/invoice-classic`)).json()) as { sample_data: Record<string, unknown> };
    const render = structuredClone(sample.sample_data);
    for (const [key, value] of Object.entries(render)) if (typeof value === 'string') render[key] = `${value} ${'\\#%&~_^{}'.repeat(200)}`;
    const renderBody = JSON.stringify({ data: render });
    const compileBody = JSON.stringify({ latex: MANY_NAMES });
    // Warm: the TeX Live index and the first sandboxes.
    await (await post('/api/v1/validate', HOSTILE_VALIDATES[1]!, 999)).arrayBuffer();
    const quiet = await healthSamples(3_000);

    const statuses = new Map<string, number>();
    const count = (what: string, status: number) => statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
    const stop = Date.now() + ATTACK_MS;
    const validator = async (client: number) => {
      for (let i = client; Date.now() < stop; i++) {
        const res = await post('/api/v1/validate', HOSTILE_VALIDATES[i % HOSTILE_VALIDATES.length]!, client);
        await res.arrayBuffer();
        count(`validate ${['long', 'many', 'inputs'][i % 3]}`, res.status);
      }
    };
    const compiler = async (client: number) => {
      while (Date.now() < stop) {
        const res = await post('/api/v1/compile', compileBody, client);
        await res.arrayBuffer();
        count('compile', res.status);
      }
    };
    const renderer = async (client: number) => {
      while (Date.now() < stop) {
        const res = await post('/api/v1/public_templates/invoice-classic/render', renderBody, client);
        await res.arrayBuffer();
        count('render', res.status);
      }
    };
    const load = [
      ...Array.from({ length: CLIENTS }, (_, i) => validator(i)),
      ...[0, 1].map((i) => compiler(100 + i)),
      ...[0, 1].map((i) => renderer(150 + i)),
    ];
    const loud = await healthSamples(ATTACK_MS);
    await Promise.all(load);

    const p99 = percentile(loud, 0.99);
    console.log(`/health quiet p99 ${percentile(quiet, 0.99).toFixed(0)} ms; under attack p50 ${percentile(loud, 0.5).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${Math.max(...loud).toFixed(0)} ms over ${loud.length} samples; ${JSON.stringify(Object.fromEntries(statuses))}`);
    // The canary: the flood was answered, not refused, so the event loop really did the work.
    assert.ok((statuses.get('validate many 200') ?? 0) >= CLIENTS / 2, JSON.stringify(Object.fromEntries(statuses)));
    assert.ok((statuses.get('validate inputs 200') ?? 0) >= CLIENTS / 2, JSON.stringify(Object.fromEntries(statuses)));
    assert.ok((statuses.get('validate long 422') ?? 0) >= CLIENTS / 2, JSON.stringify(Object.fromEntries(statuses)));
    assert.ok((statuses.get('compile 422') ?? 0) > 0, JSON.stringify(Object.fromEntries(statuses)));
    assert.ok(p99 <= P99_BOUND_MS, `/health p99 ${p99.toFixed(0)} ms`);
  });
});
