// `quire watch`: compile the project, then again on every saved change — debounced, one
// compile in flight, and the newest state wins (changes made during a compile start one more
// when it ends, never one per event). A save that changes nothing that travels (a build file,
// the PDF itself, a dotfile) starts nothing. The PDF is replaced atomically, and a broken save
// keeps the last good one. SIGINT or SIGTERM stops it with exit 0.
import { createHash } from 'node:crypto';
import type { Target } from './config.js';
import { compileOnce, type CompileOptions, type Streams } from './compile.js';
import { isIgnored } from './ignore.js';
import { collect, type Collected, type Located, readIgnore, skipReason, UsageError } from './project.js';
import { shownPath } from './print.js';
import { MAX_FOLDERS, watchTree, type TreeWatch } from './tree-watch.js';

/** Editors save in bursts (write, rename, chmod) within a few milliseconds: one compile per burst (watchexec waits 50 ms too). */
export const DEBOUNCE_MS = 50;

function digest(collected: Collected): string {
  const hash = createHash('sha256');
  for (const [name, data] of [...collected.files].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${name}\0${data.length}\0`).update(data);
  return hash.digest('hex');
}

export async function watchProject(target: Target, located: Located, options: CompileOptions, streams: Streams): Promise<number> {
  const controller = new AbortController();
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let since: number | null = null;
  let last: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let rules = await readIgnore(located.root);

  const cycle = async () => {
    do {
      again = false;
      const started = since ?? performance.now();
      since = null;
      try {
        const collected = await collect(located);
        const now = digest(collected);
        if (now === last) continue;
        last = now;
        const outcome = await compileOnce(target, located, options, streams, started, controller.signal, collected);
        if (!outcome.written && !stopped && !options.json) streams.err.write(`(kept the last good PDF, ${shownPath(located.output)}; watching for the next save)\n`);
      } catch (err) {
        if (stopped) return;
        if (!(err instanceof UsageError)) throw err;
        streams.err.write(`quire: ${err.message}\n`);
      }
    } while (again && !stopped);
  };
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = cycle().finally(() => {
      running = null;
    });
  };

  let watcher: TreeWatch;
  try {
    watcher = await watchTree(located.root, {
      skipFolder: (rel) => rel.split('/').some((part) => part.startsWith('.')) || isIgnored(rules, rel, true),
      onEvent: (rel) => {
        if (rel === '.quireignore') {
          void readIgnore(located.root).then((fresh) => (rules = fresh), () => {});
        } else if (skipReason(located, rel, rules) !== null || rel.split('/').some((part) => part.startsWith('.'))) return;
        since ??= performance.now();
        clearTimeout(timer);
        timer = setTimeout(kick, DEBOUNCE_MS);
      },
      onFull: () => streams.err.write(`quire: the project has over ${MAX_FOLDERS} folders; saves in the others are not seen\n`),
    });
  } catch (err) {
    streams.err.write(`quire: cannot watch ${located.root}: ${(err as Error).message}\n`);
    return 2;
  }
  if (!options.json) streams.err.write(`watching ${shownPath(located.root)} (main file ${located.main}, PDF ${shownPath(located.output)}); Ctrl-C stops\n`);
  kick();

  return new Promise<number>((resolve) => {
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      watcher.close();
      controller.abort();
      void Promise.resolve(running)
        .catch(() => {})
        .then(() => {
          if (!options.json) streams.err.write('stopped\n');
          resolve(0);
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
