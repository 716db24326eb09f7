// The e-invoice validation figures (issue 41: "validating one XML ≤ 200 ms warm"):
// `node --import tsx bench/einvoice.ts` loads the rules worker, then validates the official CII,
// XRechnung and UBL examples (test/fixtures/einvoice/) BENCH_RUNS times each (default 15) after
// 3 warm-up runs, and prints the worker start, the median and fastest wall time, and the
// process CPU time per validation (wall time on a shared machine includes waiting for a core;
// CPU time is what one validation costs). `einvoiceRows()` returns the same for bench/run.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rulesPool } from '../src/einvoice/pool.js';
import { validateInvoiceXml } from '../src/einvoice/validate.js';

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures', 'einvoice');
const CASES = [
  ['CII, EN 16931 (schema + EN 16931 rules)', 'en16931-cii-example4.xml'],
  ['CII, XRechnung (schema + EN 16931 + XRechnung rules)', 'xrechnung-cii-br-de-1.xml'],
  ['UBL, EN 16931 (EN 16931 rules)', 'en16931-ubl-example1.xml'],
] as const;

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

export async function einvoiceRows(runs = Number(process.env.BENCH_RUNS ?? 15)): Promise<string[]> {
  const rows: string[] = [];
  const start = performance.now();
  await validateInvoiceXml(readFileSync(join(FIXTURES, CASES[0][1]), 'utf8'));
  rows.push(`e-invoice rules worker start + first validation: ${(performance.now() - start).toFixed(0)} ms`);
  for (const [label, file] of CASES) {
    const xml = readFileSync(join(FIXTURES, file), 'utf8');
    for (let i = 0; i < 3; i++) await validateInvoiceXml(xml);
    const times: number[] = [];
    const cpu = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await validateInvoiceXml(xml);
      times.push(performance.now() - t);
    }
    const cpuEach = cpuMs(cpu) / runs;
    times.sort((a, b) => a - b);
    rows.push(`validate ${label}: median ${times[Math.floor(runs / 2)]!.toFixed(0)} ms, fastest ${times[0]!.toFixed(0)} ms, CPU ${cpuEach.toFixed(0)} ms per validation (${runs} runs)`);
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await einvoiceRows()) console.log(row);
  await rulesPool().close();
}
