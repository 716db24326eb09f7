// Where saved templates live: lookup by id or case-insensitive name within an account, the
// plan's template count checked and the row inserted as one step per account, updates that keep
// the name index, and the name_taken refusal a unique index raises.
import type { Kysely } from 'kysely';
import type { AccountCaller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, type ServiceError } from '../errors.js';
import { links } from '../links.js';
import { limitsOf } from '../quota/plans.js';
import { lockAccount, type Db } from '../storage/db.js';
import type { Database, TemplateRow } from '../storage/schema.js';
import type { Derived } from './rows.js';
import { TemplateVersionStore } from './versions.js';

const isNumericId = (value: string) => /^[0-9]{1,15}$/.test(value);

export interface NewTemplate {
  account_id: number;
  name: string;
  kind: 'raw' | 'liquid';
  description: string;
  latex_content: string;
  instructions: string | null;
  /** The TeX Live year its renders use unless they name one; null: the server's default. */
  texlive: string | null;
  derived: Derived | null;
}

export class TemplateStore {
  /** Every saved source of a template (versions.ts), written in the same step as the template. */
  readonly versions: TemplateVersionStore;

  constructor(
    private readonly store: Db,
    private readonly clock: Clock,
    private readonly config: Config,
  ) {
    this.versions = new TemplateVersionStore(store);
  }

  get db(): Kysely<Database> {
    return this.store.kysely;
  }

  async find(accountId: number, idOrName: string): Promise<TemplateRow | undefined> {
    const query = this.db.selectFrom('templates').selectAll().where('account_id', '=', accountId);
    if (isNumericId(idOrName)) {
      const byId = await query.where('id', '=', Number(idOrName)).executeTakeFirst();
      if (byId) return byId;
    }
    return query.where('name_lower', '=', idOrName.toLowerCase()).executeTakeFirst();
  }

  async get(accountId: number, idOrName: string): Promise<TemplateRow> {
    const row = await this.find(accountId, idOrName);
    if (!row) {
      throw errors.template_not_found(`No template "${idOrName}" in this account.`, { id: idOrName });
    }
    return row;
  }

  private async checkCount(trx: Kysely<Database>, caller: AccountCaller): Promise<void> {
    const plan = caller.account.plan;
    const limit = limitsOf(plan).templates;
    if (limit === null) return;
    const row = await trx
      .selectFrom('templates')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', caller.account.id)
      .executeTakeFirst();
    const count = Number(row?.count ?? 0);
    if (count >= limit) {
      throw errors.template_limit_reached(`The ${plan} plan stores up to ${limit} templates and this account has ${count}. Delete one or upgrade.`,
        { limit, count, plan, upgrade_url: links(this.config).upgradeUrl },
      );
    }
  }

  /** Inserts a new template unless the plan's count is reached, as one step per account. */
  async insertCounted(owner: AccountCaller, values: NewTemplate): Promise<TemplateRow> {
    return this.db.transaction().execute(async (trx) => {
      await lockAccount(this.store, trx, owner.account.id);
      await this.checkCount(trx, owner);
      return this.insert(trx, values);
    });
  }

  private async insert(trx: Kysely<Database>, values: NewTemplate): Promise<TemplateRow> {
    const now = this.clock.now().toISOString();
    let row: TemplateRow;
    try {
      row = await trx
        .insertInto('templates')
        .values({
          account_id: values.account_id,
          name: values.name,
          name_lower: values.name.toLowerCase(),
          kind: values.kind,
          description: values.description,
          latex_content: values.latex_content,
          instructions: values.instructions,
          texlive: values.texlive,
          version: 1,
          schema_json: values.derived ? JSON.stringify(values.derived.schema) : null,
          sample_data_json: values.derived ? JSON.stringify(values.derived.sample_data) : null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (err) {
      if (/unique|duplicate/i.test(String((err as Error).message))) throw this.nameTaken(values.name);
      throw err;
    }
    await this.versions.record(trx, row, now);
    return row;
  }

  nameTaken(name: string): ServiceError {
    return errors.name_taken(`A template named "${name}" already exists in this account (names are case-insensitive).`, {
      name,
    });
  }

  /** Writes the changes; a new `version` is kept as a version (versions.ts) in the same step. */
  async update(row: TemplateRow, changes: Partial<TemplateRow>, derived?: Derived | null): Promise<TemplateRow> {
    const now = this.clock.now().toISOString();
    const set: Record<string, unknown> = { ...changes, updated_at: now };
    if (derived) {
      set.schema_json = JSON.stringify(derived.schema);
      set.sample_data_json = JSON.stringify(derived.sample_data);
    }
    if (typeof changes.name === 'string') set.name_lower = changes.name.toLowerCase();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const updated = await trx.updateTable('templates').set(set).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
        if (updated.version !== row.version) await this.versions.record(trx, updated, now);
        else if (derived) await this.versions.rederive(trx, updated);
        return updated;
      });
    } catch (err) {
      if (/unique|duplicate/i.test(String((err as Error).message))) throw this.nameTaken(String(changes.name));
      throw err;
    }
  }
}
