// Sign-up and key rotation (the API behind /signup and /dashboard), on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signupPage } from '../../src/http/pages/studio-pages.js';
import { SIGNUPS_PER_IP_PER_HOUR } from '../../src/quota/plans.js';
import { createAccount, DB_KINDS, testApp, type TestApp } from '../helpers.js';

for (const db of DB_KINDS) {
  describe(`sign-up and rotation (${db})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ db, env: { QUIRE_SIGNUP: 'open' } });
    });
    after(() => t.close());

    const signup = (email: unknown, ip = '203.0.113.1') =>
      t.app.inject({ method: 'POST', url: '/api/v1/signup', payload: { email }, remoteAddress: ip });

    it('creates a Free account whose key works at once', async () => {
      const res = await signup('New.User@Example.com');
      assert.equal(res.statusCode, 201);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.match(body.api_key, /^svc_[0-9a-f]{48}$/);
      assert.equal(body.account.email, 'new.user@example.com');
      assert.equal(body.account.plan, 'free');
      assert.equal(typeof body.account.id, 'number');
      const usage = await t.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': body.api_key } });
      assert.equal(usage.statusCode, 200);
      assert.equal(usage.json().user.plan, 'free');
      assert.equal(usage.json().api_key.prefix, body.api_key.slice(0, 12));
    });

    it('refuses a taken address with 409 email_taken and a bad one with validation_failed', async () => {
      const taken = await signup('new.user@example.com', '203.0.113.2');
      assert.equal(taken.statusCode, 409);
      assert.equal(taken.json().error, 'email_taken');
      const bad = await signup('not an email', '203.0.113.2');
      assert.equal(bad.statusCode, 422);
      assert.equal(bad.json().error, 'validation_failed');
      assert.equal(bad.json().fields[0].field, 'email');
      const missing = await t.app.inject({ method: 'POST', url: '/api/v1/signup', payload: {}, remoteAddress: '203.0.113.2' });
      assert.equal(missing.statusCode, 422);
      assert.equal(missing.json().error, 'validation_failed');
    });

    it('limits sign-up attempts per IP and hour; malformed ones cost nothing', async () => {
      const ip = '198.51.100.7';
      for (let i = 0; i < 3; i++) assert.equal((await signup('nope', ip)).statusCode, 422);
      for (let i = 0; i < SIGNUPS_PER_IP_PER_HOUR; i++) {
        assert.equal((await signup(`burst${i}@example.com`, ip)).statusCode, 201);
      }
      const limited = await signup('one-more@example.com', ip);
      assert.equal(limited.statusCode, 429);
      const body = limited.json();
      assert.equal(body.error, 'rate_limit');
      assert.equal(body.limit, SIGNUPS_PER_IP_PER_HOUR);
      assert.equal(body.retryable, true);
      assert.ok(body.retry_after_seconds > 0 && body.retry_after_seconds <= 3600);
      assert.equal(limited.headers['retry-after'], String(body.retry_after_seconds));
      // Another address is not affected, and nothing was created for the refused one.
      assert.equal((await signup('other-ip@example.com', '198.51.100.8')).statusCode, 201);
      await assert.rejects(t.services.accounts.byEmail('one-more@example.com'), { code: 'not_found' });
    });

    it('rotates the key: the new one works, the old one is 401, data stays with the account', async () => {
      const user = await createAccount(t.services, 'starter');
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/api_key/rotate', headers: user.headers });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.match(body.api_key, /^svc_[0-9a-f]{48}$/);
      assert.notEqual(body.api_key, user.key);
      assert.equal(body.prefix, body.api_key.slice(0, 12));
      assert.ok(!Number.isNaN(Date.parse(body.created_at)));
      const old = await t.app.inject({ url: '/api/v1/usage', headers: user.headers });
      assert.equal(old.statusCode, 401);
      assert.equal(old.json().error, 'invalid_api_key');
      const fresh = await t.app.inject({ url: '/api/v1/usage', headers: { authorization: `Bearer ${body.api_key}` } });
      assert.equal(fresh.statusCode, 200);
      assert.equal(fresh.json().user.email, user.email);
      assert.equal(fresh.json().api_key.prefix, body.prefix);
    });

    it('needs a key to rotate', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/api_key/rotate' });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'missing_api_key');
    });
  });
}

describe('sign-up closed (default)', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('answers 403 signup_closed and names the operator command; the page explains it', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/signup', payload: { email: 'a@example.com' } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'signup_closed');
    assert.match(res.json().message, /quire account create/);
    await assert.rejects(t.services.accounts.byEmail('a@example.com'), { code: 'not_found' });
  });

  it('renders the closed sign-up page with the operator command and no form', () => {
    const manifest = { entries: { signup: { js: 'signup-X.js', preload: [] } }, css: 'app-X.css', pdfWorker: 'w.mjs' };
    const closed = signupPage(manifest, false);
    assert.match(closed, /Sign-up is closed on this server/);
    assert.match(closed, /quire account create --email you@example\.com --plan free/);
    assert.doesNotMatch(closed, /signup-form/);
    assert.match(signupPage(manifest, true), /<form id="signup-form"/);
  });
});
