import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { DB_KINDS, testServices, type TestServices } from '../helpers.js';

for (const db of DB_KINDS) {
  describe(`accounts on ${db}`, () => {
    let services: TestServices;
    before(async () => {
      services = await testServices({ db });
    });
    after(() => services.cleanup());

    test('create stores the account and only a hash of its key', async () => {
      const { account, apiKey } = await services.accounts.create({ email: 'Ada@Example.com', plan: 'starter' });
      assert.equal(account.email, 'ada@example.com');
      assert.equal(account.plan, 'starter');
      const rows = await services.db.kysely.selectFrom('api_keys').selectAll().where('account_id', '=', account.id).execute();
      assert.equal(rows.length, 1);
      assert.notEqual(rows[0]!.key_hash, apiKey);
      assert.equal(rows[0]!.prefix, apiKey.slice(0, 12));
      const found = await services.accounts.authenticate(apiKey);
      assert.equal(found?.account.id, account.id);
    });

    test('emails are unique and plans are checked', async () => {
      await services.accounts.create({ email: 'dup@example.com', plan: 'free' });
      await assert.rejects(services.accounts.create({ email: 'DUP@example.com', plan: 'free' }), (e: ServiceError) => e.code === 'email_taken');
      await assert.rejects(services.accounts.create({ email: 'x@example.com', plan: 'gold' }), (e: ServiceError) => e.code === 'validation_failed');
      await assert.rejects(services.accounts.create({ email: 'not-an-email', plan: 'free' }), (e: ServiceError) => e.code === 'validation_failed');
    });

    test('rotation revokes the old key and keeps templates and assets', async () => {
      const { account, apiKey } = await services.accounts.create({ email: 'rot@example.com', plan: 'pro' });
      const now = new Date().toISOString();
      await services.db.kysely
        .insertInto('templates')
        .values({ account_id: account.id, name: 'T', name_lower: 't', kind: 'raw', description: '', latex_content: 'x', instructions: null, version: 1, schema_json: null, sample_data_json: null, created_at: now, updated_at: now })
        .execute();
      await services.db.kysely
        .insertInto('assets')
        .values({ account_id: account.id, name: 'a.png', name_lower: 'a.png', content_type: 'image/png', size_bytes: 3, sha256: 'x', created_at: now, updated_at: now })
        .execute();
      const newKey = await services.accounts.rotateKey(account.id);
      assert.notEqual(newKey, apiKey);
      assert.equal(await services.accounts.authenticate(apiKey), null, 'old key no longer works');
      assert.equal((await services.accounts.authenticate(newKey))?.account.id, account.id);
      assert.equal(await services.usage.templateCount(account.id), 1);
      assert.deepEqual(await services.usage.storedAssets(account.id), { count: 1, total_bytes: 3 });
    });

    test('revoked keys and set-plan', async () => {
      const { account, apiKey } = await services.accounts.create({ email: 'rev@example.com', plan: 'free' });
      const upgraded = await services.accounts.setPlan('rev@example.com', 'business');
      assert.equal(upgraded.plan, 'business');
      assert.equal((await services.accounts.authenticate(apiKey))?.account.plan, 'business');
      await services.accounts.revokeKeys(account.id);
      assert.equal(await services.accounts.authenticate(apiKey), null);
      assert.equal(await services.accounts.activeKey(account.id), null);
    });
  });
}
