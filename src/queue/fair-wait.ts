// The order in which waiting TeX jobs get a free slot: interactive jobs (someone waits on the
// answer) before background ones (async jobs, batch items), and within each, callers in turn
// (round-robin), each caller's own jobs in arrival order. One caller's hundred waiting jobs
// then delay another caller's one job by at most one job per slot.
import type { JobFairness } from '../tex/job.js';

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

  /** Items served before one more item of `caller` would be, turns going round as they do now. */
  ahead(caller: string): number {
    const mine = this.byCaller.get(caller)?.length ?? 0;
    // A caller without items joins the turns at the end.
    const turn = this.turns.indexOf(caller);
    let ahead = mine;
    this.turns.forEach((other, i) => {
      if (other !== caller) ahead += Math.min(this.byCaller.get(other)!.length, turn === -1 || i < turn ? mine + 1 : mine);
    });
    return ahead;
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

  /** Waiting items that would be served before one more with `fairness`. */
  ahead(fairness?: JobFairness): number {
    const caller = fairness?.caller ?? NOBODY;
    return fairness?.background ? this.interactive.size + this.background.ahead(caller) : this.interactive.ahead(caller);
  }
}

/** BullMQ's largest job priority (lower runs first; equal ones in arrival order). */
const PRIORITY_MAX = 2_097_152;
const BACKGROUND_FROM = 1_048_576;

/**
 * The BullMQ priority of a caller's job when `turn` of its jobs already wait from this node:
 * each caller's n-th waiting job gets n, so callers take turns; background jobs come after
 * every interactive one.
 */
export function fairPriority(turn: number, background: boolean): number {
  return Math.min(PRIORITY_MAX, 1 + turn + (background ? BACKGROUND_FROM : 0));
}
