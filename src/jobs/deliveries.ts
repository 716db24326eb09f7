// Sends the webhook of each finished job that has a callback, retrying 5xx, 429, timeouts and
// connection errors with exponential backoff for a bounded number of attempts. The schedule
// lives in the jobs table, so pending deliveries resume after a restart.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { JobRow } from '../storage/schema.js';
import type { CallbackPolicy } from '../webhooks/address.js';
import { deliverOnce, type Resolver } from '../webhooks/deliver.js';
import type { WebhookSecrets } from '../webhooks/secrets.js';
import { signWebhook } from '../webhooks/signing.js';
import type { DeliveryAttempt, JobStore } from './store.js';

export interface DeliveryTimings {
  /** Per attempt, connection to last byte. */
  timeoutMs: number;
  /** Wait before retry n is baseDelayMs · 2^(n-1). */
  baseDelayMs: number;
  maxAttempts: number;
  maxRedirects: number;
  /** Longest sleep of the poller between looks at the table (other nodes may add work). */
  pollMs: number;
}

export const DEFAULT_TIMINGS: DeliveryTimings = { timeoutMs: 10_000, baseDelayMs: 15_000, maxAttempts: 10, maxRedirects: 3, pollMs: 5_000 };

export function webhookPayload(row: JobRow): string {
  const type = row.status === 'succeeded' ? 'compile.succeeded' : 'compile.failed';
  return JSON.stringify({ type, job_id: row.id, data: row.body_json ? JSON.parse(row.body_json) : null });
}

export class Deliveries {
  timings: DeliveryTimings = { ...DEFAULT_TIMINGS };
  /** DNS resolution of callback hosts; unit tests may inject one. */
  resolve: Resolver | undefined;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly store: JobStore,
    private readonly secrets: WebhookSecrets,
    private readonly policy: CallbackPolicy,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Look for due deliveries now (a job just finished). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private again = false;

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.poll()
        .catch((err) => this.log.error({ err }, 'webhook poll failed'))
        .finally(() => {
          this.running = null;
          void this.sleep();
        });
    }, Math.max(0, ms));
    this.timer.unref();
  }

  private async sleep(): Promise<void> {
    if (this.closed) return;
    if (this.again) {
      this.again = false;
      return this.schedule(0);
    }
    const next = await this.store.nextDeliveryAt().catch(() => null);
    const wait = next ? next.getTime() - this.clock.now().getTime() : this.timings.pollMs;
    this.schedule(Math.min(Math.max(wait, 0), this.timings.pollMs));
  }

  private async poll(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const due = await this.store.dueDeliveries(10);
      if (due.length === 0) return;
      await Promise.all(due.map((row) => this.attempt(row)));
    }
  }

  private async attempt(row: JobRow): Promise<void> {
    const { timings } = this;
    if (!row.callback_url || !(await this.store.claimDelivery(row, timings.timeoutMs * (timings.maxRedirects + 1) + 30_000))) return;
    const attempts = JSON.parse(row.webhook_attempts_json) as DeliveryAttempt[];
    const body = webhookPayload(row);
    const timestamp = Math.floor(this.clock.now().getTime() / 1000);
    const messageId = `msg_${row.id}`;
    // Read per attempt: after a rotation, retries are signed with the new secret.
    const secret = await this.secrets.get(row.account_id);
    const headers = { 'webhook-id': messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, messageId, timestamp, body) };
    const started = this.clock.ms();
    const result = await deliverOnce(row.callback_url, body, headers, {
      policy: this.policy,
      timeoutMs: timings.timeoutMs,
      maxRedirects: timings.maxRedirects,
      ...(this.resolve ? { resolve: this.resolve } : {}),
    });
    const number = attempts.length + 1;
    const attempt: DeliveryAttempt = {
      attempt: number,
      at: new Date(started).toISOString(),
      url: result.url,
      outcome: result.outcome,
      ...(result.status !== undefined ? { status: result.status } : {}),
      ...('error' in result ? { error: result.error } : {}),
      duration_ms: this.clock.ms() - started,
    };
    attempts.push(attempt);
    const retry = result.outcome === 'retry' && number < timings.maxAttempts;
    const state = result.outcome === 'delivered' ? 'delivered' : retry ? 'pending' : 'failed';
    const nextAt = retry ? new Date(this.clock.now().getTime() + timings.baseDelayMs * 2 ** (number - 1)) : null;
    await this.store.recordAttempt(row.id, attempts, state, nextAt);
    this.log.info({ job_id: row.id, webhook_id: messageId, ...attempt, state, next_attempt_at: nextAt?.toISOString() ?? null }, 'webhook attempt');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
