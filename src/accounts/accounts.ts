// Accounts and their one active key. Rotation revokes the old key; data hangs off the
// account, so templates and assets survive it.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { errors, invalidField } from '../errors.js';
import { isPlanName, type PlanName } from '../quota/plans.js';
import type { AccountRow, Database } from '../storage/schema.js';
import { displayPrefix, generateKey, hashKey, isWellFormedKey } from './keys.js';

export interface Account {
  id: number;
  email: string;
  plan: PlanName;
  created_at: string;
}

export interface KeyInfo {
  prefix: string;
  created_at: string;
}

export interface Authenticated {
  account: Account;
  key: KeyInfo;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function toAccount(row: AccountRow): Account {
  return { id: Number(row.id), email: row.email, plan: row.plan as PlanName, created_at: row.created_at };
}

export class AccountService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly keyPrefix: string,
  ) {}

  async create(input: { email: string; plan: string }): Promise<{ account: Account; apiKey: string }> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) {
      throw invalidField('email', 'format', 'must be an email address', { message: `"${input.email}" is not an email address` });
    }
    if (!isPlanName(input.plan)) {
      throw invalidField('plan', 'enum', 'must be free, starter, pro or business', { message: `unknown plan "${input.plan}"; use free, starter, pro or business` });
    }
    const plan = input.plan;
    const now = this.clock.now().toISOString();
    return this.db.transaction().execute(async (trx) => {
      const taken = await trx.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw errors.email_taken(`an account for ${email} already exists`);
      const row = await trx
        .insertInto('accounts')
        .values({ email, plan, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      const apiKey = await this.issueKey(trx, Number(row.id));
      return { account: toAccount(row), apiKey };
    });
  }

  async list(): Promise<Account[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('id').execute();
    return rows.map(toAccount);
  }

  async byEmail(email: string): Promise<Account> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', email.trim().toLowerCase())
      .executeTakeFirst();
    if (!row) throw errors.not_found(`no account for ${email}`);
    return toAccount(row);
  }

  async byId(id: number): Promise<Account> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw errors.not_found(`no account ${id}`);
    return toAccount(row);
  }

  async setPlan(email: string, plan: string): Promise<Account> {
    if (!isPlanName(plan)) {
      throw invalidField('plan', 'enum', 'must be free, starter, pro or business', { message: `unknown plan "${plan}"; use free, starter, pro or business` });
    }
    const account = await this.byEmail(email);
    await this.db.updateTable('accounts').set({ plan }).where('id', '=', account.id).execute();
    return { ...account, plan };
  }

  /** Issues a new key and revokes every older one. */
  async rotateKey(accountId: number): Promise<string> {
    return this.db.transaction().execute((trx) => this.issueKey(trx, accountId));
  }

  async revokeKeys(accountId: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: this.clock.now().toISOString() })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async activeKey(accountId: number): Promise<KeyInfo | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['prefix', 'created_at'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row ?? null;
  }

  /** The account behind a key, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<Authenticated | null> {
    if (!isWellFormedKey(key, this.keyPrefix)) return null;
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'accounts.id',
        'accounts.email',
        'accounts.plan',
        'accounts.created_at',
        'api_keys.prefix as key_prefix',
        'api_keys.created_at as key_created_at',
      ])
      .where('api_keys.key_hash', '=', hashKey(key))
      .where('api_keys.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return null;
    return {
      account: toAccount(row),
      key: { prefix: row.key_prefix, created_at: row.key_created_at },
    };
  }

  private async issueKey(trx: Kysely<Database>, accountId: number): Promise<string> {
    const now = this.clock.now().toISOString();
    await trx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    const key = generateKey(this.keyPrefix);
    await trx
      .insertInto('api_keys')
      .values({
        account_id: accountId,
        key_hash: hashKey(key),
        prefix: displayPrefix(key, this.keyPrefix),
        created_at: now,
      })
      .execute();
    return key;
  }
}
