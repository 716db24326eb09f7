// Template versions (docs/api.md, "Template versions"): one immutable row per saved source of
// a template, with the schema, sample data and instructions it was saved with. Templates that
// exist already get their current source as their first kept version.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('template_versions')
    .addColumn('template_id', 'integer', (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('latex_content', 'text', (c) => c.notNull())
    .addColumn('instructions', 'text')
    .addColumn('schema_json', 'text')
    .addColumn('sample_data_json', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'version'])
    .execute();
  await sql`INSERT INTO template_versions (template_id, account_id, version, kind, latex_content, instructions, schema_json, sample_data_json, created_at)
    SELECT id, account_id, version, kind, latex_content, instructions, schema_json, sample_data_json, updated_at FROM templates`.execute(db);
}
