// Stored signing identities (issue 40): an account's PKCS#12 and its password, sealed with a
// key derived from the server secret (src/signing/seal.ts), beside the certificate facts the
// list shows. Deleted with the account.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_identities')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('not_before', 'text', (c) => c.notNull())
    .addColumn('not_after', 'text', (c) => c.notNull())
    .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('signing_identities_pk', ['account_id', 'name_lower'])
    .execute();
}
