// Async jobs: a request is checked and its quota reserved exactly as the synchronous call does
// (any refusal is thrown at once, not turned into a job); once accepted it gets a job row and
// runs in the background; the body the synchronous call would have sent is stored, then the
// webhook goes out. A job whose process died is failed with job_interrupted (see recover()).
import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import { errors, INTERNAL_ERROR_BODY, isServiceError } from '../errors.js';
import type { JobRow } from '../storage/schema.js';
import { checkCallbackUrl, type CallbackPolicy } from '../webhooks/address.js';
import type { AsyncRequest } from './async-fields.js';
import type { Deliveries } from './deliveries.js';
import type { AcceptedBody, JobBody } from './schemas.js';
import type { DeliveryAttempt, JobKind, JobStore } from './store.js';

/** Heartbeat of running jobs; a job unbeaten for longer than the stale time belongs to a process that died. */
const HEARTBEAT_MS = 15_000;
/**
 * One node on embedded SQLite: 20 s (a live process beats every 15 s, so a CLI command opening
 * the same database never fails the server's jobs). Several nodes on PostgreSQL: 60 s, which
 * also absorbs clock skew between nodes.
 */
export const STALE_MS = { sqlite: 20_000, postgres: 60_000 } as const;

export type Accepted = Static<typeof AcceptedBody>;

/** An async job as GET /api/v1/jobs/{id} reads it. */
export type Job = Static<typeof JobBody>;

/** Work of one async job: calls `accepted` once every synchronous check and the quota reservation passed. */
export type AsyncWork = (accepted: () => void) => Promise<unknown>;

/** What a door that may answer async passes to the work it runs (the service call's hooks). */
export interface AsyncHooks {
  /** Set when the call runs as a job: the service calls it once every check and its reservation passed. */
  onAccepted?: () => void;
}

/** A call's answer: its synchronous result, or the job it was accepted as. */
export type Answer<T> = { accepted: false; body: T } | { accepted: true; job: Accepted };

export interface AsyncOptions {
  kind: JobKind;
  callbackUrl?: unknown;
}

export class JobService {
  private readonly inFlight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly store: JobStore,
    readonly deliveries: Deliveries,
    private readonly policy: CallbackPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly baseUrl: string,
    private readonly staleMs: number,
  ) {}

  /** Refuses anonymous callers and bad callback URLs (both before anything else runs). */
  precheck(caller: Caller, callbackUrl: unknown): { accountId: number; callbackUrl: string | null } {
    if (caller.kind !== 'account') {
      throw errors.async_not_available_anonymously('Async requests need an API key: a job belongs to an account, which alone may read it.', {
        retryable: false,
      });
    }
    const url = callbackUrl === undefined || callbackUrl === null ? null : checkCallbackUrl(callbackUrl, this.policy).toString();
    return { accountId: caller.account.id, callbackUrl: url };
  }

  /**
   * The one "answer now, or accept as an async job" branch of compile, render and public
   * render, for every door. `stored` picks what the job keeps of the work's result (the
   * synchronous body); by default the result itself.
   */
  async answer<T>(
    caller: Caller,
    kind: JobKind,
    request: AsyncRequest,
    work: (hooks: AsyncHooks) => Promise<T>,
    stored: (result: T) => unknown = (result) => result,
  ): Promise<Answer<T>> {
    if (!request.async) return { accepted: false, body: await work({}) };
    const job = await this.start(caller, { kind, callbackUrl: request.callbackUrl }, async (onAccepted) => stored(await work({ onAccepted })));
    return { accepted: true, job };
  }

  /** Runs `work` until it is accepted; a refusal before that is thrown, as in the sync call. */
  async start(caller: Caller, options: AsyncOptions, work: AsyncWork): Promise<Accepted> {
    const { accountId, callbackUrl } = this.precheck(caller, options.callbackUrl);
    let accepted = false;
    let signal!: () => void;
    const acceptance = new Promise<void>((resolve) => (signal = resolve));
    const running = work(() => {
      accepted = true;
      signal();
    });
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([acceptance, settled]);
    if (!accepted) await running; // Refused before acceptance: the caller gets the error now.
    const id = randomUUID();
    await this.store.create({ id, accountId, kind: options.kind, status: 'running', callbackUrl });
    this.track(this.settle(id, running));
    return this.accepted(id, 'running');
  }

  /** A job that is accepted as is (batch render: its items are checked one by one inside). */
  async startQueued(caller: Caller, options: AsyncOptions, work: () => Promise<unknown>): Promise<Accepted> {
    const { accountId, callbackUrl } = this.precheck(caller, options.callbackUrl);
    const id = randomUUID();
    await this.store.create({ id, accountId, kind: options.kind, status: 'queued', callbackUrl });
    this.track(
      (async () => {
        // Let the 202 go out before work starts.
        await new Promise((resolve) => setImmediate(resolve));
        await this.store.setStatus(id, 'running');
        await this.settle(id, work());
      })(),
    );
    return this.accepted(id, 'queued');
  }

  private accepted(id: string, status: 'queued' | 'running'): Accepted {
    return { job_id: id, status, status_url: `${this.baseUrl}/api/v1/jobs/${id}` };
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((err) => this.log.error({ err }, 'async job bookkeeping failed')).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async settle(id: string, running: Promise<unknown>): Promise<void> {
    let status: number;
    let body: unknown;
    try {
      body = await running;
      status = 200;
    } catch (err) {
      if (isServiceError(err)) {
        status = err.status;
        body = err.body();
      } else {
        this.log.error({ err, job_id: id }, 'async job failed unexpectedly');
        status = 500;
        body = INTERNAL_ERROR_BODY;
      }
    }
    if (await this.store.finish(id, status, body)) this.deliveries.kick();
  }

  /** The job for its own account; any other caller gets job_not_found (never a hint it exists). */
  async get(caller: Caller, id: string): Promise<Job> {
    const row = caller.kind === 'account' && /^[0-9a-f-]{36}$/.test(id) ? await this.store.get(caller.account.id, id) : undefined;
    if (!row) throw errors.job_not_found(`No job ${id} for this account.`, { job_id: id });
    return jobView(row);
  }

  /** Fails the jobs of processes that stopped beating (now and every heartbeat), and beats for ours. */
  async recover(): Promise<void> {
    await this.failOrphans(new Date(this.clock.now().getTime() - this.staleMs));
    this.timer = setInterval(() => {
      void this.store
        .heartbeat()
        .then(() => this.failOrphans(new Date(this.clock.now().getTime() - this.staleMs)))
        .catch((err) => this.log.error({ err }, 'job heartbeat failed'));
    }, HEARTBEAT_MS);
    this.timer.unref();
    this.deliveries.kick();
  }

  private async failOrphans(before: Date): Promise<void> {
    const interrupted = errors.job_interrupted(
      'The server stopped while this job ran. Send the request again (with a new Idempotency-Key).',
      { retryable: true },
    );
    let any = false;
    for (const id of await this.store.orphans(before)) {
      if (await this.store.finish(id, interrupted.status, interrupted.body(), 'failed')) {
        this.log.warn({ job_id: id }, 'async job interrupted');
        any = true;
      }
    }
    if (any) this.deliveries.kick();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
    await this.deliveries.close();
  }
}

/** GET /api/v1/jobs/{id}: `result` or `error` is the body the synchronous call sends. */
export function jobView(row: JobRow): Job {
  const done = row.status === 'succeeded' || row.status === 'failed';
  const body = done && row.body_json ? (JSON.parse(row.body_json) as Record<string, unknown>) : undefined;
  const attempts = JSON.parse(row.webhook_attempts_json) as DeliveryAttempt[];
  return {
    job_id: row.id,
    kind: row.kind,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(done && row.http_status !== null ? { http_status: row.http_status } : {}),
    ...(done && row.status === 'succeeded' ? { result: body } : {}),
    ...(done && row.status === 'failed' ? { error: body } : {}),
    ...(row.callback_url
      ? { webhook: { callback_url: row.callback_url, state: row.webhook_state, next_attempt_at: row.webhook_next_at, attempts } }
      : {}),
  };
}
