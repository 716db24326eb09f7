// Liquid renders run in worker threads, never on the event loop: a template with nested loops or
// huge string operations keeps one worker busy, not the server. Each worker has a heap limit
// (resourceLimits) and is terminated at the render time limit; a dead worker is replaced by a
// fresh one. Two warm workers are kept (the machine this targets has two cores); renders beyond
// that wait their turn, bounded by the caller's own deadline.
import { Worker } from 'node:worker_threads';
import { errors, restore, type ServiceError, type ErrorCode } from '../errors.js';
import type { RenderedTemplate } from './liquid.js';

export interface RenderRequest {
  id: number;
  source: string;
  data: Record<string, unknown>;
  assetNames?: readonly string[];
}

export type RenderReply =
  | { ready: true }
  | { id: number; ok: true; result: RenderedTemplate }
  | { id: number; ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } }
  | { id: number; ok: false; internal: string };

export interface RenderPoolOptions {
  /** Workers kept warm and run at once. */
  size: number;
  /** Wall clock of one render in a worker; the worker is terminated when it passes. */
  timeoutMs: number;
  /** Old-generation heap of one worker. */
  heapMb: number;
}

// The time limit is the Liquid render limit (LIQUID_LIMITS.renderLimit), now enforced from outside.
export const RENDER_POOL_DEFAULTS: RenderPoolOptions = { size: 2, timeoutMs: 10_000, heapMb: 256 };

interface Task {
  request: RenderRequest;
  resolve: (result: RenderedTemplate) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded the engine; a render's clock starts only then. */
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
}

// Built, the worker is JavaScript. Under tsx (tests, development) it is TypeScript, and a worker
// thread does not inherit the main thread's loader hooks, so it registers tsx before importing.
const TYPESCRIPT = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(`./render-worker${TYPESCRIPT ? '.ts' : '.js'}`, import.meta.url);
const WORKER_SCRIPT: string | URL = TYPESCRIPT
  ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`
  : WORKER_URL;

export class RenderPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  /** Workers replaced after a kill or crash (for tests and metrics). */
  replaced = 0;

  constructor(readonly options: RenderPoolOptions = RENDER_POOL_DEFAULTS) {}

  render(source: string, data: Record<string, unknown>, assetNames?: readonly string[]): Promise<RenderedTemplate> {
    if (this.closed) return Promise.reject(new Error('render pool is closed'));
    return new Promise<RenderedTemplate>((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, source, data, assetNames }, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts the workers ahead of the first render, so it does not pay their start-up. */
  warm(): void {
    while (!this.closed && this.slots.length < this.options.size) this.slots.push(this.spawn());
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error('render pool is closed'));
    await Promise.all(this.slots.splice(0).map((slot) => this.stop(slot)));
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SCRIPT, {
      eval: TYPESCRIPT,
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, ready: false, task: null, timer: null };
    worker.on('message', (reply: RenderReply) => this.finish(slot, reply));
    worker.on('error', (err: Error & { code?: string }) => {
      const memory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.fail(slot, memory ? limitError(`The render used more than the ${this.options.heapMb} MB memory limit and was stopped.`, { limit_mb: this.options.heapMb }) : err);
    });
    worker.on('exit', () => this.fail(slot, limitError('The render stopped unexpectedly.', {})));
    // After the listeners: adding a 'message' listener refs the port again. An idle worker
    // never keeps the process alive.
    worker.unref();
    return slot;
  }

  private dispatch(): void {
    this.warm();
    for (const slot of this.slots) {
      if (slot.ready && !slot.task && this.queue.length > 0) this.start(slot, this.queue.shift()!);
    }
    // A worker keeps the process alive only while a render runs or waits for it to start.
    for (const slot of this.slots) {
      if (slot.task || (!slot.ready && this.queue.length > 0)) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  private start(slot: Slot, task: Task): void {
    slot.task = task;
    slot.timer = setTimeout(() => {
      const seconds = this.options.timeoutMs / 1000;
      this.fail(slot, limitError(`The render took longer than ${seconds} s and was stopped (render time limit).`, { limit_seconds: seconds }));
    }, this.options.timeoutMs);
    slot.worker.postMessage(task.request);
  }

  private finish(slot: Slot, reply: RenderReply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const task = slot.task;
    if (!task || task.request.id !== reply.id) return;
    this.release(slot);
    if (reply.ok) task.resolve(reply.result);
    else if ('error' in reply) task.reject(restore(reply.error.code, reply.error.message, reply.error.details));
    else task.reject(new Error(`render worker failed: ${reply.internal}`));
    this.dispatch();
  }

  /** Ends the slot's render with `err`, terminates its worker and puts a fresh one in its place. */
  private fail(slot: Slot, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    const task = slot.task;
    this.release(slot);
    this.slots.splice(index, 1);
    void this.stop(slot);
    task?.reject(err);
    if (!slot.ready) {
      // A worker that cannot even start would be replaced for ever: fail what waits instead,
      // and let the next render try again.
      for (const waiting of this.queue.splice(0)) waiting.reject(err);
      return;
    }
    if (this.closed) return;
    this.replaced++;
    this.dispatch();
  }

  private release(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.task = null;
  }

  private async stop(slot: Slot): Promise<void> {
    slot.worker.removeAllListeners('exit');
    slot.worker.removeAllListeners('error');
    slot.worker.on('error', () => {});
    await slot.worker.terminate();
  }
}

function limitError(message: string, details: Record<string, unknown>): ServiceError {
  return errors.render_failed(message, details);
}

let shared: RenderPool | null = null;

/** The process's render pool, started on first use. */
export function renderPool(): RenderPool {
  shared ??= new RenderPool();
  return shared;
}

/** Replaces the process's render pool (tests shorten its time limit); the old one is closed. */
export async function useRenderPool(options: Partial<RenderPoolOptions> = {}): Promise<RenderPool> {
  const previous = shared;
  shared = new RenderPool({ ...RENDER_POOL_DEFAULTS, ...options });
  await previous?.close();
  return shared;
}
