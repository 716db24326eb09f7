// Assets in real compiles: every format lands in the PDF on every engine, stored assets
// merge with inline ones (also after a key rotation), and every refusal has its own code
// and costs no quota.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { blobKey } from '../../src/assets/library.js';
import { LibraryAssetResolver } from '../../src/assets/resolver.js';
import { ServiceError } from '../../src/errors.js';
import { PLAN_NAMES, PLANS } from '../../src/quota/plans.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/assets/${name}`, import.meta.url));
const PNG = fixture('logo.png');
const JPG = fixture('photo.jpg');
const PDF = fixture('doc.pdf');
const SVG = fixture('diagram.svg');
const b64 = (data: Buffer) => data.toString('base64');

const doc = (body: string) => `\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n${body}\n\\end{document}\n`;
const ALL_FOUR = doc(
  [
    '\\includegraphics[width=2cm]{logo.png}',
    '\\includegraphics[width=2cm]{photo.jpg}',
    '\\includegraphics[width=4cm]{doc.pdf}',
    '\\includegraphics[width=4cm]{diagram.svg}',
  ].join('\n\n'),
);

describe('assets in compiles', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  const compile = (account: TestAccount | null, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: account?.headers ?? {}, payload });

  /** The delivered PDF's text and its raster images (type and encoding per pdfimages). */
  async function pdfOf(body: { pdf_url: string }): Promise<{ text: string; images: Array<{ type: string; enc: string }> }> {
    const url = new URL(body.pdf_url);
    const res = await t.app.inject({ url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    const file = join(t.services.dataDir, `check-${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, res.rawPayload);
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    const images = execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' })
      .split('\n')
      .slice(2)
      .filter(Boolean)
      .map((line) => {
        const cols = line.trim().split(/\s+/);
        return { type: cols[2]!, enc: cols[8]! };
      });
    return { text, images };
  }

  const usedThisMonth = async (account: TestAccount) =>
    (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage.used_this_month as number;

  test('PNG, JPEG, PDF and SVG inline all reach the PDF (pdflatex)', async () => {
    const account = await createAccount(t.services, 'starter');
    const res = await compile(account, {
      latex: ALL_FOUR,
      assets: { 'logo.png': b64(PNG), 'photo.jpg': b64(JPG), 'doc.pdf': b64(PDF), 'diagram.svg': b64(SVG) },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.ephemeral_assets_used, ['logo.png', 'photo.jpg', 'doc.pdf', 'diagram.svg']);
    assert.deepEqual(body.stored_assets_used, []);
    assert.equal(body.assets_count, 4);
    const { text, images } = await pdfOf(body);
    assert.match(text, /Embedded PDF fixture/);
    assert.match(text, /Quire SVG diagram/);
    assert.deepEqual(images.map((i) => i.enc).sort(), ['image', 'jpeg'], 'one PNG (flate) and one JPEG (DCT) image');
  });

  for (const compiler of ['xelatex', 'lualatex'] as const) {
    test(`SVG with and without extension, and a PNG, on ${compiler}`, async () => {
      const account = await createAccount(t.services, 'pro');
      const res = await compile(account, {
        compiler,
        latex: doc('\\includegraphics[width=4cm]{diagram.svg}\n\n\\includegraphics[width=3cm]{picture}\n\n\\includegraphics[width=1cm]{logo.png}'),
        assets: { 'diagram.svg': b64(SVG), 'picture.svg': b64(SVG), 'logo.png': b64(PNG) },
      });
      assert.equal(res.statusCode, 200, res.body);
      const { text, images } = await pdfOf(res.json());
      assert.equal(text.match(/Quire SVG diagram/g)?.length, 2);
      assert.equal(images.length, 1);
    });
  }

  test('stored assets merge with inline ones and survive a key rotation', async () => {
    const account = await createAccount(t.services, 'pro');
    for (const [name, data] of [['Logo.png', PNG], ['doc.pdf', PDF], ['diagram.svg', SVG]] as const) {
      const up = await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: account.headers, payload: { name, content_base64: b64(data) } });
      assert.equal(up.statusCode, 201);
    }
    const newKey = await t.services.accounts.rotateKey(account.id);
    const old = await compile(account, { latex: ALL_FOUR, use_stored_assets: ['logo.png'] });
    assert.equal(old.statusCode, 401, 'the rotated-out key no longer works');
    const rotated = { ...account, headers: { authorization: `Bearer ${newKey}` } };
    const res = await compile(rotated, {
      latex: ALL_FOUR,
      assets: { 'photo.jpg': b64(JPG) },
      use_stored_assets: ['logo.png', 'DOC.pdf', 'diagram.svg', 'logo.PNG'],
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.ephemeral_assets_used, ['photo.jpg']);
    assert.deepEqual(body.stored_assets_used, ['Logo.png', 'doc.pdf', 'diagram.svg'], 'resolved names, each once');
    assert.equal(body.assets_count, 4);
    const { text, images } = await pdfOf(body);
    assert.match(text, /Embedded PDF fixture/);
    assert.match(text, /Quire SVG diagram/);
    assert.equal(images.length, 2);
    assert.equal(await usedThisMonth(rotated), 1);
  });

  describe('refusals (nothing compiles, nothing is charged)', () => {
    let pro: TestAccount;
    let free: TestAccount;
    before(async () => {
      pro = await createAccount(t.services, 'pro');
      free = await createAccount(t.services, 'free');
      const up = await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: pro.headers, payload: { name: 'logo.png', content_base64: b64(PNG) } });
      assert.equal(up.statusCode, 201);
    });
    after(async () => {
      assert.equal(await usedThisMonth(pro), 0);
      assert.equal(await usedThisMonth(free), 0);
    });

    const expect = async (account: TestAccount | null, payload: Record<string, unknown>, status: number, error: string) => {
      const res = await compile(account, { latex: doc('\\includegraphics{logo.png}'), ...payload });
      assert.equal(res.statusCode, status, res.body.slice(0, 300));
      const body = res.json();
      assert.equal(body.error, error);
      return body;
    };

    test('anonymous: 422 assets_not_available_anonymously with next_step', async () => {
      const body = await expect(null, { assets: { 'logo.png': b64(PNG) } }, 422, 'assets_not_available_anonymously');
      assert.deepEqual(body.next_step, {
        action: 'retry_without_assets',
        env_var: 'QUIRE_API_KEY',
        header: 'Authorization: Bearer <key>',
        remove_fields: ['assets'],
      });
      const both = await expect(null, { assets: { 'a.png': b64(PNG) }, use_stored_assets: ['x.png'] }, 422, 'assets_not_available_anonymously');
      assert.deepEqual(both.next_step.remove_fields, ['assets', 'use_stored_assets']);
    });

    test('anonymous on a server with open sign-up: next_step obtain_api_key', async () => {
      const resolver = new LibraryAssetResolver(t.services.assets, { ...t.services.config, signup: 'open' });
      await assert.rejects(
        resolver.forCompile({ kind: 'anonymous', ip: '198.51.100.7' }, { use_stored_assets: ['logo.png'] }),
        (err: unknown) => {
          assert.ok(err instanceof ServiceError);
          assert.equal(err.code, 'assets_not_available_anonymously');
          assert.deepEqual(err.details.next_step, {
            action: 'obtain_api_key',
            signup_url: 'http://quire.test/signup',
            card_required: false,
            env_var: 'QUIRE_API_KEY',
            header: 'Authorization: Bearer <key>',
            remove_fields: ['use_stored_assets'],
          });
          return true;
        },
      );
    });

    test('a plan whose asset count is 0: 403 assets_not_allowed', async () => {
      const original = PLANS.free.maxAssetsPerDocument;
      (PLANS.free as { maxAssetsPerDocument: number }).maxAssetsPerDocument = 0;
      try {
        await expect(free, { assets: { 'logo.png': b64(PNG) } }, 403, 'assets_not_allowed');
      } finally {
        (PLANS.free as { maxAssetsPerDocument: number }).maxAssetsPerDocument = original;
      }
    });

    test('Free plan with use_stored_assets: 403 plan_required', async () => {
      await expect(free, { use_stored_assets: ['logo.png'] }, 403, 'plan_required');
    });

    test('hostile names, renamed files and bad encodings name the asset', async () => {
      const cases: Array<[Record<string, string>, string, string]> = [
        [{ '../../../etc/passwd.png': b64(PNG) }, 'invalid_asset_filename', '../../../etc/passwd.png'],
        [{ '/abs/logo.png': b64(PNG) }, 'invalid_asset_filename', '/abs/logo.png'],
        [{ '.logo.png': b64(PNG) }, 'invalid_asset_filename', '.logo.png'],
        [{ 'lo\u0000go.png': b64(PNG) }, 'invalid_asset_filename', 'lo\u0000go.png'],
        [{ 'main.pdf': b64(PDF) }, 'invalid_asset_filename', 'main.pdf'],
        [{ [`${'n'.repeat(65)}.png`]: b64(PNG) }, 'invalid_asset_filename', `${'n'.repeat(65)}.png`],
        [{ 'evil.tex': b64(Buffer.from('\\input{/etc/passwd}')) }, 'invalid_asset_format', 'evil.tex'],
        [{ 'logo.png': b64(JPG) }, 'invalid_asset_format', 'logo.png'],
        [{ 'photo.jpg': b64(PDF) }, 'invalid_asset_format', 'photo.jpg'],
        [{ 'doc.pdf': b64(SVG) }, 'invalid_asset_format', 'doc.pdf'],
        [{ 'diagram.svg': b64(PNG) }, 'invalid_asset_format', 'diagram.svg'],
        [{ 'x.svg': b64(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="http://127.0.0.1:8080/health"/></svg>')) }, 'invalid_asset_format', 'x.svg'],
        [{ 'x.svg': b64(Buffer.from('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>')) }, 'invalid_asset_format', 'x.svg'],
        [{ 'logo.png': '%%% not base64' }, 'invalid_asset_encoding', 'logo.png'],
        [{ 'logo.png': '' }, 'invalid_asset_encoding', 'logo.png'],
      ];
      for (const [assets, error, asset] of cases) {
        const body = await expect(pro, { assets }, 422, error);
        assert.equal(body.asset, asset, JSON.stringify(assets).slice(0, 60));
        assert.ok(body.message.includes(JSON.stringify(asset)), body.message);
      }
      await expect(pro, { assets: ['logo.png'] }, 422, 'validation_failed');
    });

    test('too many assets and too many bytes on every plan', async () => {
      for (const plan of PLAN_NAMES) {
        const account = await createAccount(t.services, plan);
        const limits = PLANS[plan];
        const many = Object.fromEntries(Array.from({ length: limits.maxAssetsPerDocument + 1 }, (_, i) => [`p${i}.png`, b64(PNG)]));
        const count = await expect(account, { assets: many }, 422, 'too_many_assets');
        assert.equal(count.limit, limits.maxAssetsPerDocument);
        assert.equal(count.plan, plan);

        let oversize: Record<string, unknown>;
        if (plan === 'free' || plan === 'starter') {
          // Decoded bytes count: one real file padded one byte past the limit.
          const big = Buffer.concat([PDF, Buffer.alloc(limits.maxAssetsBytesPerDocument + 1 - PDF.length, 0x20)]);
          oversize = { assets: { 'big.pdf': b64(big) } };
        } else {
          // Merged with a stored asset that already fills the document's allowance.
          await t.services.db.kysely
            .insertInto('assets')
            .values({
              account_id: account.id,
              name: 'huge.pdf',
              name_lower: 'huge.pdf',
              content_type: 'application/pdf',
              size_bytes: limits.maxAssetsBytesPerDocument,
              sha256: 'f'.repeat(64),
              created_at: new Date().toISOString(),
              updated_at: new Date().toISOString(),
            })
            .execute();
          oversize = { assets: { 'logo.png': b64(PNG) }, use_stored_assets: ['huge.pdf'] };
        }
        const bytes = await expect(account, oversize, 413, 'assets_too_large');
        assert.equal(bytes.limit, limits.maxAssetsBytesPerDocument);
        assert.ok(bytes.total_bytes > limits.maxAssetsBytesPerDocument);
        assert.equal(await usedThisMonth(account), 0);
      }
    });

    test('merged count is checked too', async () => {
      const starter = await createAccount(t.services, 'starter');
      await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: starter.headers, payload: { name: 'logo.png', content_base64: b64(PNG) } });
      const inline = Object.fromEntries(Array.from({ length: PLANS.starter.maxAssetsPerDocument }, (_, i) => [`q${i}.png`, b64(PNG)]));
      const body = await expect(starter, { assets: inline, use_stored_assets: ['logo.png'] }, 422, 'too_many_assets');
      assert.equal(body.count, PLANS.starter.maxAssetsPerDocument + 1);
    });

    test('collision, shape and missing names', async () => {
      const collision = await expect(pro, { assets: { 'LOGO.png': b64(PNG) }, use_stored_assets: ['logo.png'] }, 422, 'asset_name_collision');
      assert.equal(collision.asset, 'logo.png');
      for (const shape of ['logo.png', [1], { 0: 'logo.png' }, [null], true]) {
        await expect(pro, { use_stored_assets: shape }, 422, 'invalid_stored_assets_shape');
      }
      const missing = await expect(pro, { use_stored_assets: ['logo.png', 'nope.png', '../x.png'] }, 422, 'asset_not_found');
      assert.equal(missing.asset, 'nope.png');
      assert.deepEqual(missing.missing, ['nope.png', '../x.png']);
    });

    test('a deleted stored asset: asset_not_found', async () => {
      const account = await createAccount(t.services, 'starter');
      await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: account.headers, payload: { name: 'gone.png', content_base64: b64(PNG) } });
      const del = await t.app.inject({ method: 'DELETE', url: '/api/v1/assets/gone.png', headers: account.headers });
      assert.equal(del.statusCode, 204);
      const body = await expect(account, { use_stored_assets: ['gone.png'] }, 422, 'asset_not_found');
      assert.deepEqual(body.missing, ['gone.png']);
      assert.equal(await usedThisMonth(account), 0);
    });

    test('a stored row whose blob is missing: 500 asset_storage_error', async () => {
      const account = await createAccount(t.services, 'business');
      const up = await t.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: account.headers,
        payload: { name: 'vanished.pdf', content_base64: b64(Buffer.concat([PDF, Buffer.from('\n%vanished\n')])) },
      });
      await t.services.blobs.delete(blobKey(up.json().asset.sha256));
      const body = await expect(account, { use_stored_assets: ['vanished.pdf'] }, 500, 'asset_storage_error');
      assert.equal(body.asset, 'vanished.pdf');
      assert.equal(await usedThisMonth(account), 0);
    });
  });
});
