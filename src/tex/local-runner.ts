// How this process runs TeX jobs: the runner in its warm sandboxes, inside the preamble
// cache (pdflatex formats, their engines primed ahead) and the paused preambles (xelatex, lualatex), with the warm
// PDF/A-1b validators of its output step. The one way code outside tex/ gets a runner, so
// none of it depends on runner.ts.
import type { JobRunner } from './job.js';
import { WarmValidators, type WarmValidatorOptions } from './output/warm-validator.js';
import { PausedPreambles, type PausedOptions } from './caches/paused-cache.js';
import { PreambleCache, type PreambleCacheOptions } from './caches/preamble-cache.js';
import { PrimedFormats, type PrimedOptions } from './caches/primed-formats.js';
import { TexRunner, type RunnerOptions } from './runner.js';

export function localRunner(
  options: RunnerOptions,
  preambles: Omit<PreambleCacheOptions, 'primed' | 'root'> & { primed?: PrimedOptions },
  paused?: Omit<PausedOptions, 'isolate' | 'root'>,
  validators: Omit<WarmValidatorOptions, 'workRoot' | 'isolate' | 'root'> = { count: 0 },
): JobRunner {
  // Every layer gets the runner's TeX image: its sandboxes, its cache keys, its validators.
  const { root, isolate, workRoot } = options;
  const runner = new TexRunner(options, new WarmValidators({ ...validators, workRoot, isolate, root }));
  const { primed, ...formats } = preambles;
  const cache = new PreambleCache(runner, { ...formats, root, ...(primed && primed.maxCount > 0 ? { primed: new PrimedFormats(runner.pool, primed) } : {}) });
  return paused && paused.maxCount > 0 ? new PausedPreambles(cache, runner, { ...paused, isolate, root }) : cache;
}
