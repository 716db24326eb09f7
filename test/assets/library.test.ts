// The stored asset library over HTTP on both databases: upsert, list, get, delete, plan
// caps (also under concurrency), content-addressed blobs and usage.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { blobKey } from '../../src/assets/library.js';
import { LibraryAssetResolver } from '../../src/assets/resolver.js';
import { PLANS } from '../../src/quota/plans.js';
import { createAccount, DB_KINDS, testApp, type TestAccount, type TestApp } from '../helpers.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/assets/${name}`, import.meta.url));
const PNG = fixture('logo.png');
const JPG = fixture('photo.jpg');
const PDF = fixture('doc.pdf');
const SVG = fixture('diagram.svg');
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

for (const db of DB_KINDS) {
  describe(`stored asset library on ${db}`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ db });
    });
    after(() => t.close());

    const upload = (account: TestAccount, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: account.headers, payload });
    const list = async (account: TestAccount) => (await t.app.inject({ url: '/api/v1/assets', headers: account.headers })).json();

    test('Free plan: every library operation is 403 plan_required', async () => {
      const free = await createAccount(t.services, 'free');
      const responses = [
        await upload(free, { name: 'logo.png', content_base64: PNG.toString('base64') }),
        await t.app.inject({ url: '/api/v1/assets', headers: free.headers }),
        await t.app.inject({ url: '/api/v1/assets/logo.png', headers: free.headers }),
        await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/1', headers: free.headers }),
      ];
      for (const res of responses) {
        assert.equal(res.statusCode, 403);
        assert.equal(res.json().error, 'plan_required');
        assert.equal(res.json().plan, 'free');
      }
    });

    test('no key: 401', async () => {
      const res = await t.app.inject({ url: '/api/v1/assets' });
      assert.equal(res.statusCode, 401);
    });

    test('upsert, list, get by id and by name, delete', async () => {
      const pro = await createAccount(t.services, 'pro');
      const created = await upload(pro, { name: 'Logo.png', content_base64: PNG.toString('base64') });
      assert.equal(created.statusCode, 201);
      const { asset, created: isNew } = created.json();
      assert.equal(isNew, true);
      assert.deepEqual(
        { name: asset.name, content_type: asset.content_type, size_bytes: asset.size_bytes, sha256: asset.sha256 },
        { name: 'Logo.png', content_type: 'image/png', size_bytes: PNG.length, sha256: sha(PNG) },
      );
      assert.equal(typeof asset.id, 'number');
      assert.ok(!Number.isNaN(Date.parse(asset.updated_at)));
      assert.equal(asset.content_base64, undefined);

      // Same name in another case replaces it: 200, same id, new content.
      const replaced = await upload(pro, { name: 'logo.PNG', content_base64: JPG.toString('base64') });
      assert.equal(replaced.statusCode, 422, 'a JPEG under .PNG is a renamed file');
      assert.equal(replaced.json().error, 'invalid_asset_format');
      const again = await upload(pro, { name: 'LOGO.png', content_base64: PNG.toString('base64'), content_type: 'image/png' });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().created, false);
      assert.equal(again.json().asset.id, asset.id);

      const jpg = await upload(pro, { name: 'photo.jpg', content_base64: JPG.toString('base64'), content_type: 'image/jpg' });
      assert.equal(jpg.statusCode, 201);
      assert.equal(jpg.json().asset.content_type, 'image/jpeg');
      const pdf = await upload(pro, { name: 'doc.pdf', content_base64: PDF.toString('base64') });
      assert.equal(pdf.json().asset.content_type, 'application/pdf');
      const svg = await upload(pro, { name: 'diagram.svg', content_base64: SVG.toString('base64') });
      assert.equal(svg.statusCode, 201);
      assert.equal(svg.json().asset.content_type, 'image/svg+xml');

      const body = await list(pro);
      const total = PNG.length + JPG.length + PDF.length + SVG.length;
      assert.deepEqual(
        { count: body.count, total_bytes: body.total_bytes, count_limit: body.count_limit, total_bytes_limit: body.total_bytes_limit, remaining_bytes: body.remaining_bytes },
        { count: 4, total_bytes: total, count_limit: PLANS.pro.maxStoredAssets, total_bytes_limit: PLANS.pro.maxStoredAssetsBytes, remaining_bytes: PLANS.pro.maxStoredAssetsBytes - total },
      );
      assert.deepEqual(body.assets.map((a: { name: string }) => a.name), ['diagram.svg', 'doc.pdf', 'LOGO.png', 'photo.jpg']);
      assert.ok(body.assets.every((a: Record<string, unknown>) => !('content_base64' in a)));

      const byId = await t.app.inject({ url: `/api/v1/assets/${asset.id}`, headers: pro.headers });
      assert.equal(byId.statusCode, 200);
      assert.equal(byId.json().asset.content_base64, PNG.toString('base64'));
      const byName = await t.app.inject({ url: '/api/v1/assets/DIAGRAM.SVG', headers: pro.headers });
      assert.equal(byName.statusCode, 200);
      assert.deepEqual(Buffer.from(byName.json().asset.content_base64, 'base64'), SVG);

      const usage = (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json();
      assert.deepEqual(usage.stored_assets, {
        count: 4,
        total_bytes: total,
        count_limit: PLANS.pro.maxStoredAssets,
        total_bytes_limit: PLANS.pro.maxStoredAssetsBytes,
        remaining_bytes: PLANS.pro.maxStoredAssetsBytes - total,
      });

      const deleted = await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/Photo.JPG', headers: pro.headers });
      assert.equal(deleted.statusCode, 204);
      assert.equal(deleted.body, '');
      const gone = await t.app.inject({ url: '/api/v1/assets/photo.jpg', headers: pro.headers });
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().error, 'not_found');
      assert.equal((await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/photo.jpg', headers: pro.headers })).statusCode, 404);
      for (const absent of ['99999999999999', '0', 'nope.png', '..%2F..%2Fetc%2Fpasswd']) {
        const res = await t.app.inject({ url: `/api/v1/assets/${absent}`, headers: pro.headers });
        assert.equal(res.statusCode, 404, absent);
        assert.equal(res.json().error, 'not_found');
      }
      assert.equal((await list(pro)).count, 3);
    });

    test("another account's assets are invisible", async () => {
      const owner = await createAccount(t.services, 'starter');
      const other = await createAccount(t.services, 'starter');
      const { asset } = (await upload(owner, { name: 'private.png', content_base64: PNG.toString('base64') })).json();
      assert.equal((await t.app.inject({ url: `/api/v1/assets/${asset.id}`, headers: other.headers })).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/assets/${asset.id}`, headers: other.headers })).statusCode, 404);
      assert.equal((await t.app.inject({ url: `/api/v1/assets/${asset.id}`, headers: owner.headers })).statusCode, 200);
    });

    test('bad uploads get their own codes and store nothing', async () => {
      const account = await createAccount(t.services, 'starter');
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ name: '../../etc/passwd.png', content_base64: PNG.toString('base64') }, 422, 'invalid_asset_filename'],
        [{ name: '.htaccess.png', content_base64: PNG.toString('base64') }, 422, 'invalid_asset_filename'],
        [{ name: `${'x'.repeat(61)}.png`, content_base64: PNG.toString('base64') }, 422, 'invalid_asset_filename'],
        [{ name: 'logo.gif', content_base64: PNG.toString('base64') }, 422, 'invalid_asset_format'],
        [{ name: 'logo.png', content_base64: PDF.toString('base64') }, 422, 'invalid_asset_format'],
        [{ name: 'logo.png', content_base64: PNG.toString('base64'), content_type: 'application/pdf' }, 422, 'invalid_asset_format'],
        [{ name: 'x.svg', content_base64: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>').toString('base64') }, 422, 'invalid_asset_format'],
        [{ name: 'logo.png', content_base64: 'not base64!' }, 422, 'invalid_asset_encoding'],
        [{ name: 'logo.png', content_base64: '' }, 422, 'invalid_asset_encoding'],
        [{ name: 'logo.png' }, 422, 'validation_failed'],
        [{ name: 'logo.png', content_base64: PNG.toString('base64'), extra: 1 }, 422, 'validation_failed'],
      ];
      for (const [payload, status, error] of cases) {
        const res = await upload(account, payload);
        assert.equal(res.statusCode, status, JSON.stringify(payload).slice(0, 80));
        assert.equal(res.json().error, error, JSON.stringify(payload).slice(0, 80));
      }
      const named = (await upload(account, { name: 'logo.png', content_base64: PDF.toString('base64') })).json();
      assert.equal(named.asset, 'logo.png');
      assert.match(named.message, /logo\.png/);
      assert.equal((await list(account)).count, 0);
    });

    test('Starter count cap: 403 asset_limit_reached; replacing at the cap still works', async () => {
      const starter = await createAccount(t.services, 'starter');
      const cap = PLANS.starter.maxStoredAssets!;
      for (let i = 0; i < cap; i++) {
        assert.equal((await upload(starter, { name: `a${i}.png`, content_base64: PNG.toString('base64') })).statusCode, 201);
      }
      const over = await upload(starter, { name: 'one-more.png', content_base64: PNG.toString('base64') });
      assert.equal(over.statusCode, 403);
      assert.equal(over.json().error, 'asset_limit_reached');
      assert.equal(over.json().limit, cap);
      assert.equal((await upload(starter, { name: 'A0.png', content_base64: PNG.toString('base64') })).statusCode, 200);
      assert.equal((await list(starter)).count, cap);
    });

    test('concurrent uploads cannot pass the count cap', async () => {
      const starter = await createAccount(t.services, 'starter');
      const cap = PLANS.starter.maxStoredAssets!;
      for (let i = 0; i < cap - 1; i++) await upload(starter, { name: `b${i}.png`, content_base64: PNG.toString('base64') });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => upload(starter, { name: `race${i}.png`, content_base64: PNG.toString('base64') })),
      );
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 403, 403, 403, 403, 403]);
      assert.equal((await list(starter)).count, cap);
    });

    test('concurrent uploads of one new name: one creates, the others replace', async () => {
      const account = await createAccount(t.services, 'pro');
      const results = await Promise.all(
        ['same.png', 'SAME.png', 'Same.png'].map((name) => upload(account, { name, content_base64: PNG.toString('base64') })),
      );
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 200, 201]);
      assert.equal(new Set(results.map((r) => r.json().asset.id)).size, 1);
      assert.equal((await list(account)).count, 1);
    });

    test('bytes cap: 413 storage_quota_exceeded, also for concurrent uploads', async () => {
      const starter = await createAccount(t.services, 'starter');
      const limit = PLANS.starter.maxStoredAssetsBytes;
      // A big asset already stored (the row is what the cap counts), leaving room for one PNG.
      await t.services.db.kysely
        .insertInto('assets')
        .values({
          account_id: starter.id,
          name: 'big.pdf',
          name_lower: 'big.pdf',
          content_type: 'application/pdf',
          size_bytes: limit - PNG.length - 10,
          sha256: '0'.repeat(64),
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
        })
        .execute();
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) => upload(starter, { name: `c${i}.png`, content_base64: PNG.toString('base64') })),
      );
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 413, 413, 413]);
      const refused = results.find((r) => r.statusCode === 413)!.json();
      assert.equal(refused.error, 'storage_quota_exceeded');
      assert.equal(refused.limit, limit);
      assert.equal(refused.remaining_bytes, 10);
      const body = await list(starter);
      assert.equal(body.total_bytes, limit - 10);
      assert.equal(body.remaining_bytes, 10);
    });

    test('identical bytes are stored once; a blob goes with its last row', async () => {
      const a = await createAccount(t.services, 'pro');
      const b = await createAccount(t.services, 'business');
      const mine = Buffer.concat([PDF, Buffer.from(`\n%${db} only here\n`)]);
      const key = blobKey(sha(mine));
      await upload(a, { name: 'shared.pdf', content_base64: mine.toString('base64') });
      await upload(b, { name: 'same.pdf', content_base64: mine.toString('base64') });
      await upload(b, { name: 'twice.pdf', content_base64: mine.toString('base64') });
      assert.equal(await t.services.blobs.size(key), mine.length);
      assert.equal((await list(b)).count_limit, null, 'business: unlimited count');

      await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/shared.pdf', headers: a.headers });
      await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/same.pdf', headers: b.headers });
      assert.equal(await t.services.blobs.size(key), mine.length, 'still named by twice.pdf');
      // Replacing the last row's content collects the old blob.
      await upload(b, { name: 'twice.pdf', content_base64: Buffer.concat([PDF, Buffer.from('\n%extra\n')]).toString('base64') });
      assert.equal(await t.services.blobs.size(key), null);
    });

    test('compile resolution: stored names case-insensitively, merged with inline, SVG converted', async () => {
      const account = await createAccount(t.services, 'starter');
      await upload(account, { name: 'Brand.svg', content_base64: SVG.toString('base64') });
      await upload(account, { name: 'doc.pdf', content_base64: PDF.toString('base64') });
      const found = await t.services.accounts.authenticate(account.key);
      const caller = { kind: 'account' as const, ip: '127.0.0.1', account: found!.account, key: found!.key };
      const resolver = new LibraryAssetResolver(t.services.assets, t.services.config);
      const resolved = await resolver.forCompile(caller, {
        assets: { 'logo.png': PNG.toString('base64') },
        use_stored_assets: ['brand.svg', 'DOC.PDF'],
      });
      assert.deepEqual(resolved.ephemeral, ['logo.png']);
      assert.deepEqual(resolved.stored, ['Brand.svg', 'doc.pdf']);
      const files = new Map(resolved.files.map((f) => [f.name, f.data]));
      assert.deepEqual([...files.keys()].sort(), ['DOC.PDF', 'brand.svg', 'brand.svg.pdf', 'graphics.cfg', 'logo.png']);
      assert.deepEqual(files.get('DOC.PDF'), PDF);
      assert.deepEqual(files.get('brand.svg'), SVG);
      assert.equal(files.get('brand.svg.pdf')!.subarray(0, 5).toString(), '%PDF-');
      assert.match(files.get('graphics.cfg')!.toString(), /Gin@rule@\.svg/);
      assert.deepEqual(await t.services.assets.names(caller), ['Brand.svg', 'doc.pdf']);
    });

    test('a row whose blob is missing: 500 asset_storage_error', async () => {
      const account = await createAccount(t.services, 'pro');
      const { asset } = (await upload(account, { name: 'lost.jpg', content_base64: JPG.toString('base64') })).json();
      await t.services.blobs.delete(blobKey(asset.sha256));
      const res = await t.app.inject({ url: '/api/v1/assets/lost.jpg', headers: account.headers });
      assert.equal(res.statusCode, 500);
      assert.equal(res.json().error, 'asset_storage_error');
      assert.equal(res.json().asset, 'lost.jpg');
    });
  });
}
