// The bench's per-stage table: where a case's compile jobs spent their time, read from the
// service's own stage histograms (quire_job_stage_seconds, see src/metrics.ts) before and
// after the case, so each row is the mean of that case's jobs only. `http + rest` is what the
// client waited for beyond the job's stages: HTTP both ways, auth, quota, the database, the PDF GET.
import type { Registry } from 'prom-client';

export const STAGES = ['queue', 'sandbox', 'tex', 'inspect', 'reads', 'cleanup', 'store'] as const;
type Totals = Map<string, { sum: number; count: number }>;

export async function stageTotals(registry: Registry): Promise<Totals> {
  const text = await registry.getSingleMetricAsString('quire_job_stage_seconds');
  const totals: Totals = new Map();
  for (const match of text.matchAll(/^quire_job_stage_seconds_(sum|count)\{stage="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const entry = totals.get(match[2]!) ?? { sum: 0, count: 0 };
    entry[match[1] as 'sum' | 'count'] = Number(match[3]);
    totals.set(match[2]!, entry);
  }
  return totals;
}

/** One table row: the mean milliseconds per stage between two readings, and the client's rest. */
export function stageRow(name: string, before: Totals, after: Totals, clientMeanMs: number): string {
  const means = STAGES.map((stage) => {
    const a = after.get(stage) ?? { sum: 0, count: 0 };
    const b = before.get(stage) ?? { sum: 0, count: 0 };
    return a.count > b.count ? ((a.sum - b.sum) / (a.count - b.count)) * 1000 : 0;
  });
  const rest = clientMeanMs - means.reduce((x, y) => x + y, 0);
  return `${name.padEnd(44)}${[...means, rest, clientMeanMs].map((ms) => ms.toFixed(1).padStart(10)).join('')}`;
}

export const stageHeader = () => `${'stage means, ms'.padEnd(44)}${[...STAGES, 'http+rest', 'client'].map((s) => s.padStart(10)).join('')}`;
