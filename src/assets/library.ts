// The stored asset library (SPEC §2.7, §4.3b, §8.5): per account, paid plans only, upsert
// by case-insensitive name. Bytes live in the blob store under their sha256, so identical
// files are kept once; a blob goes when the last row naming it goes. Writes lock the account
// (and the blob's hash) so concurrent uploads cannot pass the plan's caps together.
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { sql, type Kysely } from 'kysely';
import { requirePaidPlan, type AccountCaller, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, invalidField } from '../errors.js';
import { links } from '../links.js';
import type { Counters } from '../quota/counters.js';
import { FairUse } from '../quota/fair-use.js';
import { limitsOf } from '../quota/plans.js';
import type { BlobStore } from '../storage/blobs.js';
import { lockAccount, type Db } from '../storage/db.js';
import type { AssetRow, Database } from '../storage/schema.js';
import { convertPostScript, convertSvg } from './convert.js';
import type { AssetBody, AssetListBody, AssetWithContentBody, GetAssetResult, SaveAssetBody, SaveAssetResult } from './schemas.js';
import { CONTENT_TYPES, quoteName, sanitisedSvg, validateAsset, type AssetFormat } from './validate.js';

export type Asset = Static<typeof AssetBody>;
export type AssetWithContent = Static<typeof AssetWithContentBody>;
export type AssetList = Static<typeof AssetListBody>;
/** Its types are checked again here (a door may pass what its schema let through). */
export type SaveAssetInput = Static<typeof SaveAssetBody>;

export function blobKey(sha256: string): string {
  return `assets/${sha256}`;
}

function toAsset(row: AssetRow): Asset {
  return {
    id: Number(row.id),
    name: row.name,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Accepted spellings of each format's MIME type (the first is stored). */
const CONTENT_TYPE_ALIASES: Record<AssetFormat, string[]> = {
  png: ['image/png'],
  jpeg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  pdf: ['application/pdf'],
  svg: ['image/svg+xml'],
  postscript: ['application/postscript', 'application/eps', 'image/eps', 'image/x-eps'],
  otf: ['font/otf', 'application/font-sfnt', 'application/x-font-opentype', 'application/vnd.ms-opentype'],
  ttf: ['font/ttf', 'application/font-sfnt', 'application/x-font-ttf', 'application/x-font-truetype'],
  ttc: ['font/collection', 'application/font-sfnt'],
};

export class AssetService {
  constructor(
    private readonly db: Db,
    private readonly blobs: BlobStore,
    private readonly clock: Clock,
    private readonly config: Config,
    /** The fair-use counters conversions are counted in (none: uncounted, for tools). */
    counters?: Counters,
  ) {
    this.fair = counters ? new FairUse(counters, clock, config) : undefined;
  }

  private readonly fair: FairUse | undefined;

  private get kysely(): Kysely<Database> {
    return this.db.kysely;
  }

  /** The caller's account, if its plan has a stored asset library. */
  libraryOwner(caller: Caller): AccountCaller {
    return requirePaidPlan(caller, 'Stored assets', links(this.config).upgradeUrl);
  }


  async list(caller: Caller): Promise<AssetList> {
    const { account } = this.libraryOwner(caller);
    const rows = await this.kysely
      .selectFrom('assets')
      .selectAll()
      .where('account_id', '=', account.id)
      .orderBy('name_lower')
      .execute();
    const limits = limitsOf(account.plan);
    const total = rows.reduce((sum, row) => sum + Number(row.size_bytes), 0);
    return {
      assets: rows.map(toAsset),
      count: rows.length,
      total_bytes: total,
      count_limit: limits.maxStoredAssets,
      total_bytes_limit: limits.maxStoredAssetsBytes,
      remaining_bytes: Math.max(0, limits.maxStoredAssetsBytes - total),
    };
  }

  async get(caller: Caller, idOrName: string): Promise<Static<typeof GetAssetResult>> {
    const { account } = this.libraryOwner(caller);
    const row = await this.find(this.kysely, account.id, idOrName);
    const data = await this.content(row);
    return { asset: { ...toAsset(row), content_base64: data.toString('base64') } };
  }

  async save(caller: Caller, input: SaveAssetInput): Promise<Static<typeof SaveAssetResult>> {
    const { account } = this.libraryOwner(caller);
    if (typeof input.name !== 'string') throw invalidField('name', input.name === undefined ? 'required' : 'type', 'must be a string');
    if (input.content_base64 === undefined) throw invalidField('content_base64', 'required', 'must be a base64 string');
    if (input.content_type !== undefined && input.content_type !== null && typeof input.content_type !== 'string') {
      throw invalidField('content_type', 'type', 'must be a string');
    }
    const name = input.name;
    const { format, data } = validateAsset(name, input.content_base64);
    const contentType = this.contentType(name, format, input.content_type as string | null | undefined);
    // An SVG or EPS the converter cannot read is refused now, not at its first compile.
    if (format === 'svg' || format === 'postscript') await this.tryConversion(caller, name, format, data);

    const sha256 = createHash('sha256').update(data).digest('hex');
    const limits = limitsOf(account.plan);
    const now = this.clock.now().toISOString();
    let replaced: AssetRow | undefined;
    let wroteBlob = false;
    let row: AssetRow;
    try {
      row = await this.kysely.transaction().execute(async (trx) => {
        await lockAccount(this.db, trx, account.id);
        await this.lockBlob(trx, sha256);
        replaced = await trx
          .selectFrom('assets')
          .selectAll()
          .where('account_id', '=', account.id)
          .where('name_lower', '=', name.toLowerCase())
          .executeTakeFirst();
        const totals = await trx
          .selectFrom('assets')
          .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.sum<number>('size_bytes').as('total')])
          .where('account_id', '=', account.id)
          .executeTakeFirstOrThrow();
        const count = Number(totals.count);
        const total = Number(totals.total ?? 0);
        if (!replaced && limits.maxStoredAssets !== null && count >= limits.maxStoredAssets) {
          throw errors.asset_limit_reached(
            `The ${account.plan} plan stores at most ${limits.maxStoredAssets} assets and this account has ${count}; delete one or upgrade.`,
            { limit: limits.maxStoredAssets, count, plan: account.plan, upgrade_url: links(this.config).upgradeUrl },
          );
        }
        const after = total - Number(replaced?.size_bytes ?? 0) + data.length;
        if (after > limits.maxStoredAssetsBytes) {
          const remaining = Math.max(0, limits.maxStoredAssetsBytes - total + Number(replaced?.size_bytes ?? 0));
          throw errors.storage_quota_exceeded(
            `Asset ${quoteName(name)} is ${data.length} bytes but only ${remaining} of the ${account.plan} plan's ${limits.maxStoredAssetsBytes} stored bytes remain; delete assets or upgrade.`,
            {
              asset: name,
              limit: limits.maxStoredAssetsBytes,
              total_bytes: total,
              size_bytes: data.length,
              remaining_bytes: remaining,
              plan: account.plan,
              upgrade_url: links(this.config).upgradeUrl,
            },
          );
        }
        // The blob is in place before any row names it; under the hash lock no collector
        // can remove it between the write and the commit.
        if ((await this.blobs.size(blobKey(sha256))) !== data.length) {
          wroteBlob = true;
          await this.blobs.put(blobKey(sha256), data);
        }
        const values = { name, content_type: contentType, size_bytes: data.length, sha256, updated_at: now };
        if (replaced) {
          return trx.updateTable('assets').set(values).where('id', '=', replaced.id).returningAll().executeTakeFirstOrThrow();
        }
        return trx
          .insertInto('assets')
          .values({ ...values, account_id: account.id, name_lower: name.toLowerCase(), created_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    } catch (err) {
      if (wroteBlob) await this.collect(sha256).catch(() => {});
      throw err;
    }
    if (replaced && replaced.sha256 !== sha256) await this.collect(replaced.sha256);
    return { asset: toAsset(row), created: !replaced };
  }

  /**
   * Converts the upload once to prove it converts. The run holds one of the caller's in-flight
   * slots and a failed run's time is failure time, as for a compile (docs/fair-use.md).
   */
  private async tryConversion(caller: Caller, name: string, format: 'svg' | 'postscript', data: Buffer): Promise<void> {
    const svg = format === 'svg' ? sanitisedSvg(name, data) : undefined;
    const ticket = await this.fair?.admit(caller);
    const started = performance.now();
    let converted = false;
    try {
      if (svg !== undefined) await convertSvg(name, svg, { isolate: this.config.sandbox });
      else await convertPostScript(name, data, { isolate: this.config.sandbox });
      converted = true;
    } finally {
      ticket?.spend(performance.now() - started);
      await ticket?.finish(converted);
    }
  }

  async delete(caller: Caller, idOrName: string): Promise<void> {
    const { account } = this.libraryOwner(caller);
    const row = await this.kysely.transaction().execute(async (trx) => {
      await lockAccount(this.db, trx, account.id);
      const found = await this.find(trx, account.id, idOrName);
      await trx.deleteFrom('assets').where('id', '=', found.id).execute();
      return found;
    });
    await this.collect(row.sha256);
  }

  /** Names in the caller's library (render resolves \includegraphics names against them). */
  async names(caller: Caller): Promise<string[]> {
    if (caller.kind !== 'account') return [];
    const rows = await this.kysely
      .selectFrom('assets')
      .select('name')
      .where('account_id', '=', caller.account.id)
      .orderBy('name_lower')
      .execute();
    return rows.map((row) => row.name);
  }

  /** Rows for the given names, matched case-insensitively. */
  async byNames(accountId: number, names: string[]): Promise<AssetRow[]> {
    if (names.length === 0) return [];
    return this.kysely
      .selectFrom('assets')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(
        'name_lower',
        'in',
        names.map((name) => name.toLowerCase()),
      )
      .execute();
  }

  /** The stored bytes of a row; a row whose blob is gone is a server fault (500). */
  async content(row: AssetRow): Promise<Buffer> {
    const data = await this.blobs.get(blobKey(row.sha256));
    if (!data) {
      throw errors.asset_storage_error(
        `Stored asset ${quoteName(row.name)} is listed but its content is missing from storage; upload it again.`,
        { asset: row.name },
      );
    }
    return data;
  }

  private contentType(name: string, format: AssetFormat, given: string | null | undefined): string {
    const canonical = CONTENT_TYPES[format];
    if (given === undefined || given === null || given.trim() === '') return canonical;
    const type = given.split(';')[0]!.trim().toLowerCase();
    if (CONTENT_TYPE_ALIASES[format].includes(type)) return canonical;
    throw errors.invalid_asset_format(
      `Asset ${quoteName(name)}: content_type "${given.slice(0, 100)}" does not match the file (${canonical}); omit it to have it inferred.`,
      { asset: name, content_type: given.slice(0, 100), expected_content_type: canonical },
    );
  }

  private async find(db: Kysely<Database>, accountId: number, idOrName: string): Promise<AssetRow> {
    let query = db.selectFrom('assets').selectAll().where('account_id', '=', accountId);
    if (/^[0-9]+$/.test(idOrName)) {
      const id = Number(idOrName);
      query = Number.isSafeInteger(id) && id <= 2_147_483_647 ? query.where('id', '=', id) : query.where(sql<boolean>`false`);
    } else {
      query = query.where('name_lower', '=', idOrName.toLowerCase());
    }
    const row = await query.executeTakeFirst();
    if (!row) {
      throw errors.not_found(`No stored asset ${quoteName(idOrName)} in this account.`, { asset: idOrName });
    }
    return row;
  }

  /** Serialises writers of one account (PostgreSQL; SQLite runs one transaction at a time). */
  /** Serialises blob writes and collection for one hash until the transaction ends. */
  private async lockBlob(trx: Kysely<Database>, sha256: string): Promise<void> {
    if (this.db.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtextextended(${`quire-asset:${sha256}`}, 0))`.execute(trx);
  }

  /** Deletes the blob of `sha256` when no row of any account names it any more. */
  private async collect(sha256: string): Promise<void> {
    await this.kysely.transaction().execute(async (trx) => {
      await this.lockBlob(trx, sha256);
      const used = await trx
        .selectFrom('assets')
        .select('id')
        .where('sha256', '=', sha256)
        .limit(1)
        .executeTakeFirst();
      if (!used) await this.blobs.delete(blobKey(sha256));
    });
  }
}
