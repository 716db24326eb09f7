// The signing_identities table: one account's rows only, by name (case-insensitive). The sealed
// PKCS#12 is read only by `sealed()`, for a signature; the list never selects it.
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { IdentityFacts } from './identity.js';
import type { IdentityInfo } from './schema.js';

const LISTED = ['name', 'subject', 'issuer', 'not_before', 'not_after', 'fingerprint_sha256', 'key_type', 'created_at'] as const;

export class IdentityStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** False when the account already has an identity of this name. */
  async insert(accountId: number, name: string, facts: IdentityFacts, sealed: string, createdAt: string): Promise<boolean> {
    const result = await this.db
      .insertInto('signing_identities')
      .values({ account_id: accountId, name, name_lower: name.toLowerCase(), ...facts, sealed, created_at: createdAt })
      .onConflict((oc) => oc.columns(['account_id', 'name_lower']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  list(accountId: number): Promise<IdentityInfo[]> {
    return this.db.selectFrom('signing_identities').select(LISTED).where('account_id', '=', accountId).orderBy('name_lower').execute();
  }

  async sealed(accountId: number, name: string): Promise<(IdentityInfo & { sealed: string; name_lower: string }) | undefined> {
    return this.db
      .selectFrom('signing_identities')
      .select([...LISTED, 'sealed', 'name_lower'])
      .where('account_id', '=', accountId)
      .where('name_lower', '=', name.toLowerCase())
      .executeTakeFirst();
  }

  async remove(accountId: number, name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('signing_identities').where('account_id', '=', accountId).where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
