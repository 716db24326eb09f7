// Kept template versions: every saved source of a template is a version with the schema, sample
// data and instructions it was saved with (docs/api.md, "Template versions"). A version never
// changes once written, except that promoting a template without a new source gives its latest
// version the derived schema (the source, hence the version, is the same). Past the plan's
// kept versions the oldest are pruned; the latest never is.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import { limitsOf, isPlanName } from '../quota/plans.js';
import type { Db } from '../storage/db.js';
import type { Database, TemplateRow, TemplateVersionRow } from '../storage/schema.js';

export class TemplateVersionStore {
  constructor(private readonly store: Db) {}

  /** Records the template's current source as its version `row.version`, then prunes. */
  async record(trx: Kysely<Database>, row: TemplateRow, now: string): Promise<void> {
    await trx
      .insertInto('template_versions')
      .values({
        template_id: row.id,
        account_id: row.account_id,
        version: row.version,
        kind: row.kind,
        latex_content: row.latex_content,
        instructions: row.instructions,
        schema_json: row.schema_json,
        sample_data_json: row.sample_data_json,
        created_at: now,
      })
      .execute();
    await this.prune(trx, row);
  }

  /** A promote that keeps the source: the latest version takes the kind and derived schema. */
  async rederive(trx: Kysely<Database>, row: TemplateRow): Promise<void> {
    await trx
      .updateTable('template_versions')
      .set({ kind: row.kind, schema_json: row.schema_json, sample_data_json: row.sample_data_json })
      .where('template_id', '=', row.id)
      .where('version', '=', row.version)
      .execute();
  }

  private async prune(trx: Kysely<Database>, row: TemplateRow): Promise<void> {
    const account = await trx.selectFrom('accounts').select('plan').where('id', '=', row.account_id).executeTakeFirst();
    const keep = Math.max(1, isPlanName(account?.plan) ? limitsOf(account.plan).templateVersions : 1);
    const oldestKept = await trx
      .selectFrom('template_versions')
      .select('version')
      .where('template_id', '=', row.id)
      .orderBy('version', 'desc')
      .offset(keep - 1)
      .limit(1)
      .executeTakeFirst();
    if (!oldestKept) return;
    await trx.deleteFrom('template_versions').where('template_id', '=', row.id).where('version', '<', oldestKept.version).execute();
  }

  /** Newest first. */
  list(templateId: number): Promise<TemplateVersionRow[]> {
    return this.store.kysely.selectFrom('template_versions').selectAll().where('template_id', '=', templateId).orderBy('version', 'desc').execute();
  }

  /** Version `version` of the template, or template_version_not_found with the versions kept. */
  async kept(row: TemplateRow, version: number): Promise<TemplateVersionRow> {
    const kept = await this.get(row.id, version);
    if (kept) return kept;
    const versions = (await this.list(row.id)).map((v) => Number(v.version));
    throw errors.template_version_not_found(`Template "${row.name}" has no version ${version}; kept: ${versions.join(', ')}.`, {
      id: String(row.id),
      version,
      kept_versions: versions,
    });
  }

  /** The template as it was at `version` (its id and name as now); the template itself for the latest or none given. */
  async asOf(row: TemplateRow, version: number | undefined): Promise<TemplateRow> {
    if (version === undefined || version === row.version) return row;
    const kept = await this.kept(row, version);
    return { ...row, kind: kept.kind, version: kept.version, latex_content: kept.latex_content, instructions: kept.instructions, schema_json: kept.schema_json, sample_data_json: kept.sample_data_json };
  }

  get(templateId: number, version: number): Promise<TemplateVersionRow | undefined> {
    return this.store.kysely.selectFrom('template_versions').selectAll().where('template_id', '=', templateId).where('version', '=', version).executeTakeFirst();
  }
}
