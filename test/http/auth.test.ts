import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestApp } from '../helpers.js';

interface Operation {
  method: string;
  path: string;
}

/** Every operation the OpenAPI document marks key-only (its security has no `{}` entry). */
function keyOnlyOperations(doc: { paths: Record<string, Record<string, { security?: object[] }>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const security = op.security ?? [];
      if (security.length > 0 && !security.some((s) => Object.keys(s).length === 0)) {
        ops.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, '1') });
      }
    }
  }
  return ops;
}

describe('authentication', () => {
  let t: TestApp;
  let ops: Operation[];
  before(async () => {
    t = await testApp();
    ops = keyOnlyOperations((await t.app.inject({ url: '/openapi.json' })).json());
  });
  after(() => t.close());

  test('usage is key-only', () => {
    assert.ok(ops.some((op) => op.path === '/api/v1/usage' && op.method === 'GET'));
  });

  test('both header forms are accepted', async () => {
    const account = await createAccount(t.services, 'starter');
    for (const headers of [{ authorization: `Bearer ${account.key}` }, { 'x-api-key': account.key }]) {
      const res = await t.app.inject({ url: '/api/v1/usage', headers });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().user.email, account.email);
    }
  });

  test('every key-only route answers 401 JSON for missing, malformed, unknown and revoked keys', async () => {
    const revoked = await createAccount(t.services, 'pro');
    await t.services.accounts.revokeKeys(revoked.id);
    const unknown = 'svc_' + 'ab'.repeat(24);
    const cases: Array<[string, Record<string, string>, string]> = [
      ['missing', {}, 'missing_api_key'],
      ['not bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'invalid_api_key'],
      ['malformed', { authorization: 'Bearer svc_123' }, 'invalid_api_key'],
      ['malformed x-api-key', { 'x-api-key': 'hello' }, 'invalid_api_key'],
      ['unknown', { authorization: `Bearer ${unknown}` }, 'invalid_api_key'],
      ['revoked', { authorization: `Bearer ${revoked.key}` }, 'invalid_api_key'],
      ['revoked x-api-key', { 'x-api-key': revoked.key }, 'invalid_api_key'],
    ];
    for (const op of ops) {
      for (const [label, headers, code] of cases) {
        const res = await t.app.inject({
          method: op.method as 'GET',
          url: op.path,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: ['POST', 'PATCH', 'PUT'].includes(op.method) ? '{}' : undefined,
        });
        assert.equal(res.statusCode, 401, `${op.method} ${op.path} with ${label} key`);
        assert.match(res.headers['content-type'] as string, /application\/json/);
        const body = res.json();
        assert.equal(body.error, code, `${op.method} ${op.path} with ${label} key`);
        assert.equal(typeof body.message, 'string');
      }
    }
  });
});
