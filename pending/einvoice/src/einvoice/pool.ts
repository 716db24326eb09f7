// The e-invoice rules run in one worker thread (a pool of one: the machine has two cores, and one
// warm copy of the rule sets is ~100 MB of heap), never on the event loop. Calls queue for it in
// order; each has a wall clock, past which the worker is terminated and replaced (the call is
// refused as too costly to check); a crashed or out-of-memory worker is replaced the same way.
// The worker starts on first use (or warm()) and never keeps the process alive while idle.
import { Worker } from 'node:worker_threads';
import type { CheckOutcome } from './check.js';
import type { EinvoiceProfile } from './report.js';

export type RulesRequest = { id: number; profile?: EinvoiceProfile } & ({ xml: string | Uint8Array } | { pdf: Uint8Array });
export type RulesReply = { ready: true } | { id: number; outcome: CheckOutcome } | { id: number; internal: string };

export interface RulesPoolOptions {
  /** Wall clock of one check, load time not counted. */
  timeoutMs: number;
  heapMb: number;
}
export const RULES_POOL_DEFAULTS: RulesPoolOptions = { timeoutMs: 20_000, heapMb: 768 };

interface Task {
  request: RulesRequest;
  resolve: (outcome: CheckOutcome) => void;
  reject: (err: Error) => void;
}

// Under tsx (tests, development) the worker is TypeScript and must register tsx itself.
const TYPESCRIPT = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(`./worker${TYPESCRIPT ? '.ts' : '.js'}`, import.meta.url);
const WORKER_SCRIPT: string | URL = TYPESCRIPT
  ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`
  : WORKER_URL;

export class RulesPool {
  private worker: Worker | null = null;
  private ready = false;
  private current: Task | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly queue: Task[] = [];
  private nextId = 1;
  /** Workers replaced after a timeout or crash (tests read it). */
  replaced = 0;

  constructor(readonly options: RulesPoolOptions = RULES_POOL_DEFAULTS) {}

  check(input: { xml: string | Uint8Array } | { pdf: Uint8Array }, profile?: EinvoiceProfile): Promise<CheckOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, profile, ...input }, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts the worker (and its rule loading) ahead of the first check. */
  warm(): void {
    if (!this.worker) this.spawn();
  }

  async close(): Promise<void> {
    for (const task of this.queue.splice(0)) task.reject(new Error('e-invoice rules pool is closed'));
    this.current?.reject(new Error('e-invoice rules pool is closed'));
    this.current = null;
    await this.stop();
  }

  private spawn(): void {
    const worker = new Worker(WORKER_SCRIPT, {
      eval: TYPESCRIPT,
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb, maxYoungGenerationSizeMb: 64, stackSizeMb: 8 },
      stdout: false,
      stderr: false,
    });
    this.worker = worker;
    this.ready = false;
    worker.on('message', (reply: RulesReply) => this.reply(reply));
    worker.on('error', (err: Error & { code?: string }) => this.lost(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'crash', err));
    worker.on('exit', () => this.lost('crash', new Error('e-invoice rules worker exited')));
    worker.unref();
  }

  private dispatch(): void {
    if (!this.worker) this.spawn();
    if (this.ready && !this.current && this.queue.length > 0) {
      const task = this.queue.shift()!;
      this.current = task;
      this.timer = setTimeout(() => this.lost('timeout', new Error('timeout')), this.options.timeoutMs);
      this.worker!.postMessage(task.request);
    }
    // Referenced only while there is work: an idle worker never keeps the process alive.
    if (this.current || this.queue.length > 0) this.worker!.ref();
    else this.worker!.unref();
  }

  private reply(reply: RulesReply): void {
    if ('ready' in reply) {
      this.ready = true;
      this.dispatch();
      return;
    }
    const task = this.current;
    if (!task || task.request.id !== reply.id) return;
    this.settle();
    if ('outcome' in reply) task.resolve(reply.outcome);
    else task.reject(new Error(`e-invoice rules worker failed: ${reply.internal}`));
    this.dispatch();
  }

  /** The worker timed out, ran out of memory or died: the current check is refused, a fresh worker takes the queue. */
  private lost(why: 'timeout' | 'memory' | 'crash', err: Error): void {
    if (!this.worker) return;
    const task = this.current;
    const wasReady = this.ready;
    this.settle();
    void this.stop();
    if (task) {
      if (why === 'crash') task.reject(err);
      else task.resolve(tooCostly(why, this.options));
    }
    if (!wasReady && !task) {
      // A worker that cannot even start would be replaced for ever: fail what waits.
      for (const waiting of this.queue.splice(0)) waiting.reject(err);
      return;
    }
    this.replaced++;
    if (this.queue.length > 0) this.dispatch();
  }

  private settle(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.current = null;
  }

  private async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    if (!worker) return;
    worker.removeAllListeners();
    worker.on('error', () => {});
    await worker.terminate();
  }
}

function tooCostly(why: 'timeout' | 'memory', options: RulesPoolOptions): CheckOutcome {
  const message =
    why === 'timeout'
      ? `Checking this XML took longer than ${options.timeoutMs / 1000} s and was stopped.`
      : `Checking this XML needed more than ${options.heapMb} MB of memory and was stopped.`;
  return { ok: false, code: 'einvoice_xml_refused', message, details: { reason: why === 'timeout' ? 'too_slow' : 'too_much_memory' } };
}

let shared: RulesPool | null = null;

/** The process's rules pool, started on first use. */
export function rulesPool(): RulesPool {
  shared ??= new RulesPool();
  return shared;
}

/** Replaces the process's pool (tests shorten its clock); the old one is closed. */
export async function useRulesPool(options: Partial<RulesPoolOptions> = {}): Promise<RulesPool> {
  const previous = shared;
  shared = new RulesPool({ ...RULES_POOL_DEFAULTS, ...options });
  await previous?.close();
  return shared;
}
