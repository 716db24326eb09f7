// A saved template may name the TeX Live year it renders with (issue 22): one nullable column,
// null (every template saved before) meaning the server's default year. Not kept per version:
// like the name and description it is a setting of the template, read at render time.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('templates').addColumn('texlive', 'text').execute();
}
