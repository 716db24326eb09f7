// Idempotency-Key beyond compile, on SQLite and PostgreSQL, without TeX: template create and
// asset upload replay (one row, not two), key order in the body does not matter, the 24-hour
// window (a manual clock), anonymous requests ignore the header, rotations are never replayed,
// and a refusal that is not final (429) leaves the key free.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { renderMinuteKey } from '../../src/quota/keys.js';
import { createAccount, DB_KINDS, testApp, type TestAccount, type TestApp } from '../helpers.js';

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const SOURCE = '\\documentclass{article}\\begin{document}Hi {{ name }}\\end{document}';

for (const db of DB_KINDS) {
  describe(`Idempotency-Key on other routes (${db})`, () => {
    let t: TestApp;
    let pro: TestAccount;
    const clock = new ManualClock(new Date());

    before(async () => {
      t = await testApp({ db, clock });
      pro = await createAccount(t.services, 'pro');
    });
    after(() => t.close());

    const withKey = (key: string, account = pro) => ({ ...account.headers, 'idempotency-key': key });

    it('template create replays 201 with the same template; key order in the body does not matter', async () => {
      const first = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: withKey('tpl'), payload: { name: 'greeting', latex_with_placeholders: SOURCE } });
      assert.equal(first.statusCode, 201);
      const replay = await t.app.inject({
        method: 'POST',
        url: '/api/v2/templates',
        headers: { ...withKey('tpl'), 'content-type': 'application/json' },
        // The same fields in another order.
        payload: JSON.stringify({ latex_with_placeholders: SOURCE, name: 'greeting' }),
      });
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.json(), first.json());
      const list = await t.app.inject({ url: '/api/v2/templates', headers: pro.headers });
      assert.equal(list.json().templates.length, 1);
      // Without the key the same body is a new request, and here a conflict.
      const fresh = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'greeting', latex_with_placeholders: SOURCE } });
      assert.equal(fresh.json().error, 'name_taken');
    });

    it('asset upload replays; the same key on another route is reused', async () => {
      const body = { name: 'logo.png', content_base64: PNG_1PX };
      const first = await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: withKey('asset'), payload: body });
      assert.ok(first.statusCode === 200 || first.statusCode === 201, first.body);
      const replay = await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: withKey('asset'), payload: body });
      assert.equal(replay.statusCode, first.statusCode);
      assert.deepEqual(replay.json(), first.json());
      const elsewhere = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: withKey('asset'), payload: { name: 'x', latex_with_placeholders: SOURCE } });
      assert.equal(elsewhere.statusCode, 422);
      assert.equal(elsewhere.json().error, 'idempotency_key_reused');
    });

    it('keys last 24 hours', async () => {
      const first = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: withKey('day'), payload: { name: 'day-1', latex_with_placeholders: SOURCE } });
      assert.equal(first.statusCode, 201);
      clock.advance(23 * 3600 * 1000);
      const within = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: withKey('day'), payload: { name: 'day-2', latex_with_placeholders: SOURCE } });
      assert.equal(within.json().error, 'idempotency_key_reused');
      clock.advance(3600 * 1000 + 1000);
      const later = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: withKey('day'), payload: { name: 'day-2', latex_with_placeholders: SOURCE } });
      assert.equal(later.statusCode, 201);
      assert.equal(later.json().template.name, 'day-2');
    });

    it('anonymous requests ignore the header; rotations are never replayed', async () => {
      const a = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: { 'idempotency-key': 'anon' }, payload: { latex: 'no latex here' } });
      assert.equal(a.json().error, 'not_latex_source');
      assert.equal(a.headers['idempotent-replayed'], undefined);
      const account = await createAccount(t.services, 'pro');
      const secrets = [];
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks/secret/rotate', headers: withKey('rot', account) });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['idempotent-replayed'], undefined);
        secrets.push(res.json().secret);
      }
      assert.notEqual(secrets[0], secrets[1]);
      const rows = await t.services.db.kysely.selectFrom('idempotency_keys').select('body').where('account_id', '=', account.id).execute();
      assert.equal(rows.length, 0, 'no secret is stored for replay');
    });

    it('a 429 is not stored: the key stays free for the retry', async () => {
      // The render rate limit is the cheapest 429 to reach without TeX.
      const limited = await createAccount(t.services, 'pro');
      const tpl = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: limited.headers, payload: { name: 'r', latex_with_placeholders: SOURCE } });
      const id = tpl.json().template.id;
      const key = renderMinuteKey(limited.id, clock.now());
      for (let i = 0; i < t.services.config.renderPerMinute; i++) {
        await t.services.counters.tryReserve(key, t.services.config.renderPerMinute, new Date(clock.now().getTime() + 120_000));
        await t.services.counters.commit(key);
      }
      const res = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: withKey('later', limited), payload: { data: { name: 'x' } } });
      assert.equal(res.statusCode, 429);
      assert.equal(res.json().error, 'render_rate_limited');
      const rows = await t.services.db.kysely.selectFrom('idempotency_keys').selectAll().where('account_id', '=', limited.id).execute();
      assert.equal(rows.length, 0);
    });
  });
}
