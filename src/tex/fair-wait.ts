// The order in which waiting TeX jobs get a free slot: interactive jobs (someone waits on the
// answer) before background ones (async jobs, batch items), and within each, callers in turn
// (round-robin), each caller's own jobs in arrival order. One caller's hundred waiting jobs
// then delay another caller's one job by at most one job per slot.
import type { JobFairness } from './job.js';

/** Jobs without a caller share one turn. */
const NOBODY = '';

class RoundRobin<T> {
  private readonly byCaller = new Map<string, T[]>();
  /** Callers with waiting jobs, the next to be served first. */
  private readonly turns: string[] = [];
  size = 0;

  push(caller: string, item: T): void {
    const queue = this.byCaller.get(caller);
    if (queue) queue.push(item);
    else {
      this.byCaller.set(caller, [item]);
      this.turns.push(caller);
    }
    this.size++;
  }

  shift(): T | undefined {
    const caller = this.turns.shift();
    if (caller === undefined) return undefined;
    const queue = this.byCaller.get(caller)!;
    const item = queue.shift()!;
    if (queue.length > 0) this.turns.push(caller);
    else this.byCaller.delete(caller);
    this.size--;
    return item;
  }
}

export class FairWaitList<T> {
  private readonly interactive = new RoundRobin<T>();
  private readonly background = new RoundRobin<T>();

  get length(): number {
    return this.interactive.size + this.background.size;
  }

  push(item: T, fairness?: JobFairness): void {
    (fairness?.background ? this.background : this.interactive).push(fairness?.caller ?? NOBODY, item);
  }

  shift(): T | undefined {
    return this.interactive.shift() ?? this.background.shift();
  }
}
