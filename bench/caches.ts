// Which cache served a bench row, as the service itself counts it: its Prometheus counters
// (src/metrics.ts) read before and after the row's timed runs. A row's label is the delta —
// paused preambles (xelatex, lualatex), preamble formats and the primed ones among them
// (pdflatex), the result cache — over the compile jobs the row ran (quire_compiles_total), so
// a row that a cache answered says so, and a first-seen row shows that none did.
import type { Registry } from 'prom-client';

const COUNTERS = {
  compiles: 'quire_compiles_total',
  paused: 'quire_paused_preambles_hits_total',
  format: 'quire_preamble_cache_hits_total',
  primed: 'quire_preamble_cache_primed_total',
  result: 'quire_result_cache_hits_total',
} as const;

export type CacheUse = Record<keyof typeof COUNTERS, number>;

/** The counters now (a counter's labelled series summed). */
export async function cacheUse(registry: Registry): Promise<CacheUse> {
  const use = {} as CacheUse;
  for (const [key, name] of Object.entries(COUNTERS) as Array<[keyof CacheUse, string]>) {
    const text = await registry.getSingleMetricAsString(name);
    let sum = 0;
    for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'gm'))) sum += Number(match[1]);
    use[key] = sum;
  }
  return use;
}

/** The hits between two readings, e.g. "cache hits of 15 compiles: paused 15" or "cache hits of 15 compiles: none". */
export function cacheLabel(before: CacheUse, after: CacheUse): string {
  const delta = (key: keyof CacheUse) => after[key] - before[key];
  const hits = [
    delta('paused') > 0 ? `paused ${delta('paused')}` : '',
    delta('format') > 0 ? `format ${delta('format')} (primed ${delta('primed')})` : '',
    delta('result') > 0 ? `result ${delta('result')}` : '',
  ].filter(Boolean);
  return `cache hits of ${delta('compiles')} compiles: ${hits.join(', ') || 'none'}`;
}

