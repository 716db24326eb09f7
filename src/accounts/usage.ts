// GET /api/v1/usage: the Usage object of SPEC §2.8 from real counters.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { nextMonthStart, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Counters } from '../quota/counters.js';
import { FairUse } from '../quota/fair-use.js';
import { monthlyCompilesKey } from '../quota/keys.js';
import { limitsOf, monthlyUse } from '../quota/plans.js';
import type { Database } from '../storage/schema.js';
import type { AccountCaller } from './caller.js';
import type { UsageBody } from './schemas.js';

/** `usage.used_this_month` counts charged compiles only; grace compiles are not charged (SPEC §8.1). */
export type Usage = Static<typeof UsageBody>;

export class UsageService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly counters: Counters,
    private readonly clock: Clock,
    config: Config,
  ) {
    this.fair = new FairUse(counters, clock, config);
  }

  private readonly fair: FairUse;

  /** Compiles counted this month (grace ones included) and when the count resets. */
  async monthly(accountId: number): Promise<{ used: number; resets_at: string }> {
    const now = this.clock.now();
    const { used } = await this.counters.get(monthlyCompilesKey(accountId, now));
    return { used, resets_at: nextMonthStart(now).toISOString() };
  }

  async storedAssets(accountId: number): Promise<{ count: number; total_bytes: number }> {
    const row = await this.db
      .selectFrom('assets')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.sum<number>('size_bytes').as('total')])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return { count: Number(row?.count ?? 0), total_bytes: Number(row?.total ?? 0) };
  }

  async templateCount(accountId: number): Promise<number> {
    const row = await this.db
      .selectFrom('templates')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  async report(caller: AccountCaller): Promise<Usage> {
    const { account, key } = caller;
    const limits = limitsOf(account.plan);
    const [fairUse, monthly, assets, templateCount] = await Promise.all([
      this.fair.report(caller),
      this.monthly(account.id),
      this.storedAssets(account.id),
      this.templateCount(account.id),
    ]);
    return {
      user: { email: account.email, plan: account.plan },
      usage: { monthly_limit: limits.compilesPerPeriod, ...monthlyUse(account.plan, monthly.used), resets_at: monthly.resets_at },
      stored_assets: {
        count: assets.count,
        total_bytes: assets.total_bytes,
        count_limit: limits.maxStoredAssets,
        total_bytes_limit: limits.maxStoredAssetsBytes,
        remaining_bytes: Math.max(0, limits.maxStoredAssetsBytes - assets.total_bytes),
      },
      templates: {
        count: templateCount,
        limit: limits.templates,
        remaining: limits.templates === null ? null : Math.max(0, limits.templates - templateCount),
      },
      fair_use: fairUse,
      api_key: { prefix: key.prefix, created_at: key.created_at },
      limits: {
        max_pages_per_document: limits.maxPages,
        max_latex_bytes_per_document: limits.maxLatexBytes,
        max_pdf_bytes_per_document: limits.maxPdfBytes,
        max_assets_total_bytes_per_document: limits.maxAssetsBytesPerDocument,
        max_assets_count_per_document: limits.maxAssetsPerDocument,
        max_stored_assets_count: limits.maxStoredAssets,
        max_stored_assets_total_bytes: limits.maxStoredAssetsBytes,
        compile_timeout_seconds: limits.compileTimeoutSeconds,
        allowed_compilers: [...limits.compilers],
      },
    };
  }
}
