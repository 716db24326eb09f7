// `quire worker`'s own /health and /metrics, served on QUIRE_WORKER_PORT (0: a free port, logged)
// so an operator can see a stuck worker: its TeX engines, its queue connection, the jobs it runs
// now and when it last finished one. A plain node:http listener: a worker has no API door.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from './clock.js';
import type { WorkerActivity } from './queue/worker.js';
import type { EngineReport } from './tex/image/engines.js';
import { API_VERSION } from './version.js';

export interface WorkerProbe {
  engines: EngineReport;
  /** The queue's Redis connection state; `ready` when it serves commands. */
  connection(): string;
  concurrency: number;
  sandbox: boolean;
}

export interface WorkerHealth {
  status: 'ok' | 'degraded';
  version: string;
  queue: { ok: boolean; connection: string };
  engines: EngineReport;
  jobs_running: number;
  concurrency: number;
  /** When the worker last finished a TeX job (ISO 8601), or null before its first. */
  last_job_at: string | null;
  sandbox: boolean;
}

export class WorkerStatus implements WorkerActivity {
  readonly registry = new Registry();
  private running = 0;
  private lastJobMs: number | null = null;
  private server: Server | null = null;
  private readonly durations: Histogram<'name' | 'outcome'>;

  constructor(
    private readonly probe: WorkerProbe,
    private readonly clock: Clock,
  ) {
    // prom-client calls collect() with the metric as `this`: read the state through closures.
    const running = () => this.running;
    const lastJobMs = () => this.lastJobMs;
    new Gauge({
      name: 'quire_worker_jobs_running',
      help: 'TeX jobs (compiles and merges) this worker runs now',
      registers: [this.registry],
      collect() {
        this.set(running());
      },
    });
    new Gauge({
      name: 'quire_worker_last_job_timestamp_seconds',
      help: 'When this worker last finished a TeX job (Unix seconds; 0 before its first)',
      registers: [this.registry],
      collect() {
        const at = lastJobMs();
        this.set(at === null ? 0 : at / 1000);
      },
    });
    new Gauge({
      name: 'quire_worker_queue_connected',
      help: 'Whether the queue (Redis) connection is ready (1) or not (0)',
      registers: [this.registry],
      collect() {
        this.set(probe.connection() === 'ready' ? 1 : 0);
      },
    });
    this.durations = new Histogram({
      name: 'quire_worker_job_duration_seconds',
      help: 'Wall-clock time of the TeX jobs this worker ran, by job name (compile, merge) and outcome (ok: ran, whatever TeX said; error: the worker could not run it)',
      labelNames: ['name', 'outcome'] as const,
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers: [this.registry],
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'quire_' });
  }

  started(): void {
    this.running++;
  }

  ended(name: string, seconds: number, ok: boolean): void {
    this.running--;
    this.lastJobMs = this.clock.ms();
    this.durations.observe({ name, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** Ready (200) when the queue connection is and every engine is available; otherwise 503. */
  health(): { code: 200 | 503; body: WorkerHealth } {
    const connection = this.probe.connection();
    const queueOk = connection === 'ready';
    const ok = queueOk && Object.values(this.probe.engines).every((engine) => engine.available);
    return {
      code: ok ? 200 : 503,
      body: {
        status: ok ? 'ok' : 'degraded',
        version: API_VERSION,
        queue: { ok: queueOk, connection },
        engines: this.probe.engines,
        jobs_running: this.running,
        concurrency: this.probe.concurrency,
        last_job_at: this.lastJobMs === null ? null : new Date(this.lastJobMs).toISOString(),
        sandbox: this.probe.sandbox,
      },
    };
  }

  /** Serves /health and /metrics on `port` (0: any free one); resolves with the port bound. */
  listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
      } else if (path === '/health') {
        const { code, body } = this.health();
        res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      } else if (path === '/metrics') {
        this.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
      } else {
        res.writeHead(404).end();
      }
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
