// The per-account webhook signing secret: created on first use, replaced on rotation.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../storage/schema.js';
import { newWebhookSecret } from './signing.js';

export class WebhookSecrets {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async get(accountId: number): Promise<string> {
    const row = await this.db.selectFrom('webhook_secrets').select('secret').where('account_id', '=', accountId).executeTakeFirst();
    if (row) return row.secret;
    // Two first uses at once: one insert wins and both read its secret.
    await this.db
      .insertInto('webhook_secrets')
      .values({ account_id: accountId, secret: newWebhookSecret(), created_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    return (await this.db.selectFrom('webhook_secrets').select('secret').where('account_id', '=', accountId).executeTakeFirstOrThrow()).secret;
  }

  async rotate(accountId: number): Promise<string> {
    const secret = newWebhookSecret();
    const created_at = this.clock.now().toISOString();
    await this.db
      .insertInto('webhook_secrets')
      .values({ account_id: accountId, secret, created_at })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ secret, created_at }))
      .execute();
    return secret;
  }
}
