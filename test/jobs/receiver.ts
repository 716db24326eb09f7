// A real webhook receiver on loopback for tests: records each request (headers and raw body)
// and answers with whatever the test's script says for that attempt.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to do with the n-th request (0-based): answer a status, or hang for ms before answering. */
export type Script = (n: number) => { status: number; hangMs?: number; location?: string; body?: string };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(script: Script = () => ({ status: 200 }), host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const wake of waiters.splice(0)) wake();
      const { status, hangMs, location, body } = script(n);
      const answer = () => {
        if (location) res.setHeader('location', location);
        res.writeHead(status).end(body ?? 'ok');
      };
      if (hangMs) setTimeout(answer, hangMs).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hook`,
    port,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100).unref();
        });
      }
      return received;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls GET /api/v1/jobs/{id} until `done(job)`. */
export async function waitForJob(
  get: () => Promise<Record<string, unknown>>,
  done: (job: Record<string, unknown>) => boolean = (job) => job.status === 'succeeded' || job.status === 'failed',
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await get();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${String(job.status)}: ${JSON.stringify(job).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
