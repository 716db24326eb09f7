// Stored signing identities on SQLite and PostgreSQL (migration 0007): the routes' rules without
// TeX. Names are unique per account, case-insensitively; another account neither sees nor uses
// nor deletes one; the sealed value opens only for its own account and name (a row copied into
// another account does not open); the step a stored identity gives signs a PDF pdfsig accepts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Sealer } from '../../src/signing/seal.js';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { makeCa, makeLeaf, p12 } from './pki.js';

for (const db of DB_KINDS) {
  describe(`signing identities on ${db}`, () => {
    let t: TestApp;
    let a: TestAccount;
    let b: TestAccount;
    let starter: TestAccount;
    let dir: string;
    const leaf = makeLeaf(makeCa(), 'Db Signer');
    const file = p12(leaf, [], 'secret-pw', { algorithm: '3des' });
    const post = (who: TestAccount, payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: who.headers, payload });
    const list = async (who: TestAccount) => (await t.app.inject({ url: '/api/v1/signing-identities', headers: who.headers })).json();

    before(async () => {
      t = await testApp({ db });
      a = await createAccount(t.services, 'pro');
      b = await createAccount(t.services, 'business');
      starter = await createAccount(t.services, 'starter');
      dir = await mkdtemp(join(tmpdir(), 'quire-identities-'));
    });
    after(async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    });

    test('create, list, refuse a duplicate name, keep accounts apart, delete', async () => {
      const created = await post(a, { name: 'Invoices', p12_base64: file, password: 'secret-pw' });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().subject, 'CN=Db Signer, O=Quire Test, C=DE');
      assert.equal(created.json().key_type, 'RSA');
      assert.equal((await post(a, { name: 'INVOICES', p12_base64: file, password: 'secret-pw' })).statusCode, 409);
      // The same name in another account is its own identity.
      assert.equal((await post(b, { name: 'invoices', p12_base64: file, password: 'secret-pw' })).statusCode, 201);
      assert.equal((await post(starter, { name: 'x', p12_base64: file, password: 'secret-pw' })).statusCode, 201, 'Starter is a paid plan');
      assert.deepEqual((await list(a)).identities.map((i: { name: string }) => i.name), ['Invoices']);
      assert.deepEqual((await list(b)).identities.map((i: { name: string }) => i.name), ['invoices']);
      const bad = await post(a, { name: '../etc', p12_base64: file, password: 'x' });
      assert.equal(bad.statusCode, 422);
      assert.equal(bad.json().error, 'validation_failed');
      assert.equal((await t.app.inject({ method: 'DELETE', url: '/api/v1/signing-identities/invoices', headers: a.headers })).statusCode, 204);
      assert.deepEqual((await list(a)).identities, []);
      assert.equal((await list(b)).identities.length, 1, "another account's identity of the same name stays");
      const gone = await t.app.inject({ method: 'DELETE', url: '/api/v1/signing-identities/invoices', headers: a.headers });
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().error, 'signing_identity_not_found');
    });

    test('a sealed identity opens only for its account and name; its step signs a PDF pdfsig accepts', async () => {
      assert.equal((await post(a, { name: 'seal', p12_base64: file, password: 'secret-pw' })).statusCode, 201);
      const row = await t.services.db.kysely.selectFrom('signing_identities').selectAll().where('account_id', '=', a.id).where('name_lower', '=', 'seal').executeTakeFirstOrThrow();
      const sealer = new Sealer('test-secret-0123456789abcdef');
      assert.equal(sealer.open(row.sealed, a.id, 'seal')?.password, 'secret-pw');
      assert.equal(sealer.open(row.sealed, b.id, 'seal'), undefined, 'moved to another account: does not open');
      assert.equal(sealer.open(row.sealed, a.id, 'other'), undefined, 'renamed: does not open');
      assert.equal(new Sealer('another-server-secret-0123456789').open(row.sealed, a.id, 'seal'), undefined, 'another server secret: does not open');
      // The row copied into account b under its name: b's compile cannot sign with it.
      await t.services.db.kysely.insertInto('signing_identities').values({ ...row, account_id: b.id }).execute();
      const moved = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: b.headers, payload: { latex: HELLO, output: { sign: { identity: 'seal' } } } });
      assert.equal(moved.statusCode, 422);
      assert.equal(moved.json().error, 'invalid_pkcs12');
      assert.equal(moved.json().reason, 'sealed');

      const step = await t.services.signing.prepare({ kind: 'account', account: { id: a.id, plan: 'pro' } } as never, { sign: { identity: 'SEAL', reason: 'db' } });
      assert.ok(step);
      const pdf = await readFile('test/fixtures/projects/real/elsarticle-num/grabs.pdf');
      const signed = await step(pdf);
      await writeFile(join(dir, 'signed.pdf'), signed);
      const shown = execFileSync('pdfsig', ['-nocert', join(dir, 'signed.pdf')], { encoding: 'utf8' });
      assert.match(shown, /Signature is Valid/);
      assert.match(shown, /CN=Db Signer/);
    });
  });
}
