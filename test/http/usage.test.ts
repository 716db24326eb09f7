import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { nextMonthStart } from '../../src/clock.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { PLAN_NAMES, PLANS } from '../../src/quota/plans.js';
import { createAccount, DB_KINDS, testApp, type TestApp } from '../helpers.js';

for (const db of DB_KINDS) {
  describe(`GET /api/v1/usage on ${db}`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ db });
    });
    after(() => t.close());

    for (const plan of PLAN_NAMES) {
      test(`reports the ${plan} plan's limits and counters`, async () => {
        const account = await createAccount(t.services, plan);
        const res = await t.app.inject({ url: '/api/v1/usage', headers: account.headers });
        assert.equal(res.statusCode, 200);
        const body = res.json();
        const limits = PLANS[plan];
        assert.deepEqual(body.user, { email: account.email, plan });
        assert.equal(body.usage.monthly_limit, limits.compilesPerPeriod);
        assert.equal(body.usage.used_this_month, 0);
        assert.equal(body.usage.grace_used, 0);
        assert.equal(body.usage.resets_at, nextMonthStart(new Date()).toISOString());
        assert.deepEqual(body.stored_assets, {
          count: 0,
          total_bytes: 0,
          count_limit: limits.maxStoredAssets,
          total_bytes_limit: limits.maxStoredAssetsBytes,
          remaining_bytes: limits.maxStoredAssetsBytes,
        });
        assert.deepEqual(body.templates, { count: 0, limit: limits.templates, remaining: limits.templates });
        assert.equal(body.api_key.prefix, account.key.slice(0, 12));
        assert.ok(!Number.isNaN(Date.parse(body.api_key.created_at)));
        assert.deepEqual(body.limits, {
          max_pages_per_document: limits.maxPages,
          max_latex_bytes_per_document: limits.maxLatexBytes,
          max_pdf_bytes_per_document: limits.maxPdfBytes,
          max_assets_total_bytes_per_document: limits.maxAssetsBytesPerDocument,
          max_assets_count_per_document: limits.maxAssetsPerDocument,
          max_stored_assets_count: limits.maxStoredAssets,
          max_stored_assets_total_bytes: limits.maxStoredAssetsBytes,
          compile_timeout_seconds: limits.compileTimeoutSeconds,
          allowed_compilers: [...limits.compilers],
        });
      });
    }

    test('counts committed compiles of this month', async () => {
      const account = await createAccount(t.services, 'starter');
      const key = monthlyCompilesKey(account.id, new Date());
      const expires = nextMonthStart(new Date());
      for (let i = 0; i < 2; i++) {
        await t.services.counters.tryReserve(key, 100, expires);
        await t.services.counters.commit(key);
      }
      await t.services.counters.tryReserve(key, 100, expires); // in flight: not yet used
      const body = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
      assert.equal(body.usage.used_this_month, 2);
      assert.equal(body.usage.grace_used, 0);
    });

    test('grace compiles are reported on their own and never push used_this_month past the limit', async () => {
      const account = await createAccount(t.services, 'pro');
      const key = monthlyCompilesKey(account.id, new Date());
      await t.services.db.kysely.insertInto('counters').values({ key, used: 2150, reserved: 0, expires_at: '2099-01-01T00:00:00.000Z' }).execute();
      const body = (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json();
      assert.equal(body.usage.monthly_limit, 2000);
      assert.equal(body.usage.used_this_month, 2000);
      assert.equal(body.usage.grace_used, 150);
    });
  });
}
