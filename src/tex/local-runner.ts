// How this process runs TeX jobs: the runner in its warm sandboxes, inside the preamble
// cache (pdflatex formats) and the paused preambles (xelatex, lualatex). The one way code
// outside tex/ gets a runner, so none of it depends on runner.ts.
import type { JobRunner } from './job.js';
import { PausedPreambles, type PausedOptions } from './paused-cache.js';
import { PreambleCache, type PreambleCacheOptions } from './preamble-cache.js';
import { TexRunner, type RunnerOptions } from './runner.js';

export function localRunner(options: RunnerOptions, preambles: PreambleCacheOptions, paused?: Omit<PausedOptions, 'isolate'>): JobRunner {
  const runner = new TexRunner(options);
  const cache = new PreambleCache(runner, preambles);
  return paused && paused.maxCount > 0 ? new PausedPreambles(cache, runner, { ...paused, isolate: options.isolate }) : cache;
}
