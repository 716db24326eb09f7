// Job records in the database: status, the stored response body, and the webhook delivery
// state with every attempt, so a job and its pending delivery survive a restart.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, JobRow } from '../storage/schema.js';

export type JobKind = 'compile' | 'render' | 'public_render' | 'render_batch';
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type WebhookState = 'none' | 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  url: string;
  outcome: 'delivered' | 'retry' | 'final';
  status?: number;
  error?: string;
  duration_ms: number;
}

export class JobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    /** This process: whose heartbeat keeps its running jobs alive. */
    readonly runnerId: string,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  async create(job: { id: string; accountId: number; kind: JobKind; status: JobStatus; callbackUrl: string | null }): Promise<void> {
    const now = this.now();
    await this.db
      .insertInto('jobs')
      .values({
        id: job.id,
        account_id: job.accountId,
        kind: job.kind,
        status: job.status,
        callback_url: job.callbackUrl,
        webhook_state: 'none',
        webhook_attempts_json: '[]',
        runner_id: this.runnerId,
        heartbeat_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async setStatus(id: string, status: JobStatus): Promise<void> {
    await this.db.updateTable('jobs').set({ status, updated_at: this.now() }).where('id', '=', id).where('status', 'in', ['queued', 'running']).execute();
  }

  /** Stores the final body; a job with a callback gets its delivery scheduled now. */
  async finish(id: string, httpStatus: number, body: unknown, status: JobStatus = httpStatus < 300 ? 'succeeded' : 'failed'): Promise<boolean> {
    const now = this.now();
    const result = await this.db
      .updateTable('jobs')
      .set((eb) => ({
        status,
        http_status: httpStatus,
        body_json: JSON.stringify(body),
        updated_at: now,
        webhook_state: eb.case().when('callback_url', 'is not', null).then('pending').else('none').end(),
        webhook_next_at: eb.case().when('callback_url', 'is not', null).then(now).else(null).end(),
      }))
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The job, only for its own account. */
  async get(accountId: number, id: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async byId(id: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async heartbeat(): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ heartbeat_at: this.now() })
      .where('runner_id', '=', this.runnerId)
      .where('status', 'in', ['queued', 'running'])
      .execute();
  }

  /** Unfinished jobs whose runner stopped beating before `before`. */
  async orphans(before: Date): Promise<string[]> {
    const rows = await this.db.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).where('heartbeat_at', '<', before.toISOString()).execute();
    return rows.map((r) => r.id);
  }

  async dueDeliveries(limit: number): Promise<JobRow[]> {
    return this.db
      .selectFrom('jobs')
      .selectAll()
      .where('webhook_state', '=', 'pending')
      .where('webhook_next_at', '<=', this.now())
      .orderBy('webhook_next_at')
      .limit(limit)
      .execute();
  }

  /** Takes a due delivery for `leaseMs` so another node (or poll) does not send it too. */
  async claimDelivery(row: JobRow, leaseMs: number): Promise<boolean> {
    const lease = new Date(this.clock.now().getTime() + leaseMs).toISOString();
    const result = await this.db
      .updateTable('jobs')
      .set({ webhook_next_at: lease })
      .where('id', '=', row.id)
      .where('webhook_state', '=', 'pending')
      .where('webhook_next_at', '=', row.webhook_next_at)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async recordAttempt(id: string, attempts: DeliveryAttempt[], state: WebhookState, nextAt: Date | null): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ webhook_attempts_json: JSON.stringify(attempts), webhook_state: state, webhook_next_at: nextAt?.toISOString() ?? null, updated_at: this.now() })
      .where('id', '=', id)
      .execute();
  }

  /** Forgets finished jobs (and their stored bodies) last touched before `before`. */
  async sweep(before: Date): Promise<void> {
    await this.db
      .deleteFrom('jobs')
      .where('status', 'in', ['succeeded', 'failed'])
      .where('webhook_state', '!=', 'pending')
      .where('updated_at', '<', before.toISOString())
      .execute();
  }

  /** When the next delivery is due, for the poller's sleep. */
  async nextDeliveryAt(): Promise<Date | null> {
    const row = await this.db
      .selectFrom('jobs')
      .select('webhook_next_at')
      .where('webhook_state', '=', 'pending')
      .orderBy('webhook_next_at')
      .limit(1)
      .executeTakeFirst();
    return row?.webhook_next_at ? new Date(row.webhook_next_at) : null;
  }
}
