// The budget diagnosis probes run on (issue 24; the fair-share limits of issue 26 share it).
// A probe is a small test compile that checks a package suggestion. Its verdict must not
// depend on the machine's load, so a probe is bounded by CPU time (RLIMIT_CPU), never by a
// short wall clock, and it is charged what it may use, not what it happened to use: whether a
// probe runs depends only on how many the caller and the node ran in the last minute.
import type { Clock } from '../clock.js';

export interface ProbeGrant {
  /** CPU seconds the probe's TeX may use (each pass). */
  cpuSeconds: number;
}

export interface ProbeBudget {
  /**
   * Runs one probe for `caller` (an account, or a keyless address) under its grant, one probe
   * at a time on this node; rejects with ProbeRefused, without running it, when the caller's
   * runs this minute or the node's CPU reserve for probes are spent.
   */
  run<T>(caller: string, probe: (grant: ProbeGrant) => Promise<T>): Promise<T>;
  /** Probe runs the caller may still start this minute. */
  remaining(caller: string): number;
}

export interface ProbeBudgetSettings {
  /** Probe runs per caller per minute (a diagnosis makes at most three). */
  perCallerPerMinute: number;
  /** CPU seconds per probe run, charged in full to the node's reserve. */
  cpuSecondsPerProbe: number;
  /** CPU seconds of probes per minute on this node, all callers together. */
  reserveCpuSecondsPerMinute: number;
}

export class ProbeRefused extends Error {
  constructor(readonly reason: 'caller' | 'node') {
    super(reason === 'caller' ? "the caller's probe runs for this minute are spent" : "this node's CPU reserve for probes is spent");
  }
}

const WINDOW_MS = 60_000;
/** Callers remembered before idle ones are swept. */
const SWEEP_AT = 1024;

/** A rolling one-minute window per caller and for the node, in this process. */
export class WindowProbeBudget implements ProbeBudget {
  private readonly callers = new Map<string, number[]>();
  private readonly node: number[] = [];
  /** Probes run one at a time: they never take more than one of the node's TeX slots. */
  private lane: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: ProbeBudgetSettings,
    private readonly clock: Clock,
  ) {}

  remaining(caller: string): number {
    return Math.max(0, this.settings.perCallerPerMinute - this.recent(caller).length);
  }

  run<T>(caller: string, probe: (grant: ProbeGrant) => Promise<T>): Promise<T> {
    const now = this.clock.ms();
    const runs = this.recent(caller);
    if (runs.length >= this.settings.perCallerPerMinute) return Promise.reject(new ProbeRefused('caller'));
    prune(this.node, now);
    const { cpuSecondsPerProbe, reserveCpuSecondsPerMinute } = this.settings;
    if ((this.node.length + 1) * cpuSecondsPerProbe > reserveCpuSecondsPerMinute) return Promise.reject(new ProbeRefused('node'));
    runs.push(now);
    this.node.push(now);
    this.callers.set(caller, runs);
    if (this.callers.size > SWEEP_AT) this.sweep(now);
    const turn = this.lane.then(() => probe({ cpuSeconds: cpuSecondsPerProbe }));
    this.lane = turn.catch(() => undefined);
    return turn;
  }

  private recent(caller: string): number[] {
    const runs = this.callers.get(caller) ?? [];
    prune(runs, this.clock.ms());
    return runs;
  }

  private sweep(now: number): void {
    for (const [caller, runs] of this.callers) {
      prune(runs, now);
      if (runs.length === 0) this.callers.delete(caller);
    }
  }
}

/** Drops the times that left the window (they are in order). */
function prune(times: number[], now: number): void {
  let stale = 0;
  while (stale < times.length && (times[stale] ?? 0) <= now - WINDOW_MS) stale++;
  times.splice(0, stale);
}
