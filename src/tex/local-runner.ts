// How this process runs TeX jobs: the runner in its warm sandboxes, inside the preamble
// cache. The one way code outside tex/ gets a runner, so none of it depends on runner.ts.
import type { JobRunner } from './job.js';
import { PreambleCache, type PreambleCacheOptions } from './preamble-cache.js';
import { TexRunner, type RunnerOptions } from './runner.js';

export function localRunner(options: RunnerOptions, preambles: PreambleCacheOptions): JobRunner {
  return new PreambleCache(new TexRunner(options), preambles);
}
