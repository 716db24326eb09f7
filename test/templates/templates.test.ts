// V1 and V2 template endpoints and every kind transition of SPEC §3, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const LIQUID = '\\documentclass{article}\n\\begin{document}\nHello {{ name }}, total {{ total | currency }}.\n\\end{document}\n';
const LIQUID2 = '\\documentclass{article}\n\\begin{document}\nDear {{ person.first_name }}\n\\end{document}\n';
const UNSAFE = '\\documentclass{article}\n\\begin{document}\n\\immediate\\write18{id}{{ name }}\n\\end{document}\n';
const BROKEN = '\\documentclass{article}\n\\begin{document}\n{% if name %}never closed\n\\end{document}\n';

for (const db of DB_KINDS) {
  describe(`templates (${db})`, () => {
    let t: TestApp;
    let pro: TestAccount;
    let starter: TestAccount;
    let free: TestAccount;
    let other: TestAccount;

    before(async () => {
      t = await testApp({ db });
      [pro, starter, free, other] = await Promise.all([
        createAccount(t.services, 'pro'),
        createAccount(t.services, 'starter'),
        createAccount(t.services, 'free'),
        createAccount(t.services, 'pro'),
      ]);
    });
    after(() => t.close());

    const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: TestAccount, payload?: unknown) =>
      t.app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    const v1 = (who: TestAccount, body: Record<string, unknown>) => call('POST', '/api/v1/templates', who, body);
    const stored = async (who: TestAccount, id: number | string) => (await call('GET', `/api/v1/templates/${id}`, who)).json().template;

    it('Free plan gets 403 plan_required on V1 and V2 endpoints', async () => {
      for (const [method, url] of [
        ['GET', '/api/v1/templates'],
        ['POST', '/api/v1/templates'],
        ['GET', '/api/v2/templates'],
        ['POST', '/api/v2/templates'],
        ['POST', '/api/v2/templates/1/render'],
        ['POST', '/api/v2/templates/1/promote'],
      ] as const) {
        const body = method === 'POST' ? (url.includes('v1') ? { name: 'x', latex_content: HELLO } : url.endsWith('templates') ? { name: 'x', latex_with_placeholders: LIQUID } : { data: {} }) : undefined;
        const res = await call(method, url, free, body);
        assert.equal(res.statusCode, 403, `${method} ${url}`);
        assert.equal(res.json().error, 'plan_required');
        // The plan is checked before the body: a malformed body is still a 403, not a 422.
        if (method === 'POST') {
          const malformed = await call(method, url, free, { name: 42, data: 'x' });
          assert.equal(malformed.statusCode, 403, `${method} ${url} with a malformed body`);
          assert.equal(malformed.json().error, 'plan_required');
        }
      }
    });

    it('requires a key (401)', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/templates' });
      assert.equal(res.statusCode, 401);
    });

    it('V1 upsert: 201 created, 200 updated, list rows, get by id and by name, delete 204', async () => {
      const created = await v1(pro, { name: 'Hello Doc', latex_content: HELLO, description: 'd', instructions: 'Fill it.' });
      assert.equal(created.statusCode, 201);
      const body = created.json();
      assert.equal(body.created, true);
      assert.equal(body.template.name, 'Hello Doc');
      assert.equal(body.template.placeholder_engine, 'none');
      assert.equal(body.template.latex_size_bytes, Buffer.byteLength(HELLO));

      const updated = await v1(pro, { name: 'Hello Doc', description: 'new' });
      assert.equal(updated.statusCode, 200);
      assert.equal(updated.json().created, false);
      assert.equal(updated.json().template.description, 'new');
      assert.equal(updated.json().template.latex_content, HELLO);
      assert.equal(updated.json().template.id, body.template.id);

      const list = await call('GET', '/api/v1/templates', pro);
      assert.equal(list.statusCode, 200);
      const row = list.json().templates.find((r: { id: number }) => r.id === body.template.id);
      assert.equal(row.has_instructions, true);
      assert.equal(row.latex_size_bytes, Buffer.byteLength(HELLO));
      assert.equal('latex_content' in row, false);
      assert.equal('instructions' in row, false);

      const byId = await call('GET', `/api/v1/templates/${body.template.id}`, pro);
      assert.equal(byId.statusCode, 200);
      assert.equal(byId.json().template.instructions, 'Fill it.');
      const byName = await call('GET', `/api/v1/templates/${encodeURIComponent('hello doc')}`, pro);
      assert.equal(byName.json().template.id, body.template.id);

      assert.equal((await call('GET', `/api/v1/templates/${body.template.id}`, other)).statusCode, 404);
      const del = await call('DELETE', `/api/v1/templates/${encodeURIComponent('Hello Doc')}`, pro);
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      const gone = await call('GET', `/api/v1/templates/${body.template.id}`, pro);
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().error, 'template_not_found');
      assert.equal((await call('DELETE', `/api/v1/templates/${body.template.id}`, pro)).statusCode, 404);
    });

    it('V1 instructions are null when absent; a new template needs latex_content', async () => {
      const res = await v1(pro, { name: 'no-instr', latex_content: HELLO });
      assert.equal(res.json().template.instructions, null);
      const missing = await v1(pro, { name: 'no-source' });
      assert.equal(missing.statusCode, 422);
      assert.equal(missing.json().error, 'validation_failed');
      assert.deepEqual(missing.json().fields.map((f: { field: string }) => f.field), ['latex_content']);
    });

    it('V1 field limits give validation_failed with a fields list', async () => {
      const res = await v1(starter, {
        name: 'n'.repeat(101),
        latex_content: HELLO,
        description: 'd'.repeat(501),
        instructions: 'i'.repeat(50_001),
      });
      assert.equal(res.statusCode, 422);
      const body = res.json();
      assert.equal(body.error, 'validation_failed');
      const byField = Object.fromEntries(body.fields.map((f: { field: string }) => [f.field, f]));
      assert.deepEqual(byField.name, { field: 'name', rule: 'maxLength', limit: 100, message: 'must NOT have more than 100 characters' });
      assert.equal(byField.description.limit, 500);
      assert.equal(byField.instructions.limit, 50_000);

      const big = await v1(starter, { name: 'big', latex_content: HELLO + '%'.repeat(100 * 1024) });
      assert.equal(big.statusCode, 422);
      assert.equal(big.json().fields[0].field, 'latex_content');
      assert.equal(big.json().fields[0].rule, 'maxBytes');
      assert.equal(big.json().fields[0].limit, 100 * 1024);
    });

    it('enforces the plan template count (Starter 10) with template_limit_reached', async () => {
      const account = await createAccount(t.services, 'starter');
      for (let i = 0; i < 10; i++) assert.equal((await v1(account, { name: `t${i}`, latex_content: HELLO })).statusCode, 201);
      const eleventh = await v1(account, { name: 't10', latex_content: HELLO });
      assert.equal(eleventh.statusCode, 403);
      assert.equal(eleventh.json().error, 'template_limit_reached');
      assert.equal(eleventh.json().limit, 10);
      const v2 = await call('POST', '/api/v2/templates', account, { name: 'v2', latex_with_placeholders: LIQUID });
      assert.equal(v2.json().error, 'template_limit_reached');
      // Updating an existing one is still fine, and usage reports the count.
      assert.equal((await v1(account, { name: 't0', description: 'x' })).statusCode, 200);
      const usage = (await call('GET', '/api/v1/usage', account)).json();
      assert.deepEqual(usage.templates, { count: 10, limit: 10, remaining: 0 });
    });

    it('concurrent creates never pass the plan template count', async () => {
      const account = await createAccount(t.services, 'starter');
      for (let i = 0; i < 8; i++) assert.equal((await v1(account, { name: `c${i}`, latex_content: HELLO })).statusCode, 201);
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => v1(account, { name: `race${i}`, latex_content: HELLO })));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 201, 403, 403, 403, 403]);
      const usage = (await call('GET', '/api/v1/usage', account)).json();
      assert.deepEqual(usage.templates, { count: 10, limit: 10, remaining: 0 });
    });

    it('(none) → raw: Liquid placeholders without placeholder_engine are refused; none stores raw', async () => {
      const refused = await v1(pro, { name: 'placeholders', latex_content: LIQUID });
      assert.equal(refused.statusCode, 422);
      assert.equal(refused.json().error, 'liquid_placeholders_in_v1_template');
      assert.equal((await call('GET', '/api/v1/templates/placeholders', pro)).statusCode, 404);

      const raw = await v1(pro, { name: 'placeholders', latex_content: LIQUID, placeholder_engine: 'none' });
      assert.equal(raw.statusCode, 201);
      assert.equal(raw.json().template.placeholder_engine, 'none');
      // LaTeX braces alone are not placeholders.
      const latexOnly = await v1(pro, { name: 'braces', latex_content: '\\documentclass{article}\\def\\x#1{%\n#1}\\begin{document}\\textbf{{\\bfseries x}} { {x}}\\end{document}' });
      assert.equal(latexOnly.statusCode, 201);
    });

    it('invalid placeholder_engine values are refused', async () => {
      for (const value of ['jinja', 'LIQUID', 1, null, true]) {
        const res = await v1(pro, { name: 'engine', latex_content: HELLO, placeholder_engine: value });
        assert.equal(res.statusCode, 422, String(value));
        assert.equal(res.json().error, 'invalid_placeholder_engine');
      }
    });

    it('(none) → placeholder via V1 placeholder_engine: liquid (security and parse checked)', async () => {
      const res = await v1(pro, { name: 'v1-liquid', latex_content: LIQUID, placeholder_engine: 'liquid' });
      assert.equal(res.statusCode, 201);
      assert.equal(res.json().template.placeholder_engine, 'liquid');
      assert.deepEqual(res.json().schema.required, ['name', 'total']);
      const unsafe = await v1(pro, { name: 'v1-unsafe', latex_content: UNSAFE, placeholder_engine: 'liquid' });
      assert.equal(unsafe.statusCode, 422);
      assert.equal(unsafe.json().error, 'template_security_violation');
      assert.equal(unsafe.json().rule, 'shell_escape');
      assert.equal(unsafe.json().line, 3);
      const broken = await v1(pro, { name: 'v1-broken', latex_content: BROKEN, placeholder_engine: 'liquid' });
      assert.equal(broken.json().error, 'liquid_syntax_error');
      assert.equal(broken.json().line, 3);
      assert.equal((await call('GET', '/api/v1/templates/v1-unsafe', pro)).statusCode, 404);
    });

    it('raw → placeholder via V1 save with placeholder_engine: liquid (200, promoted: true)', async () => {
      const raw = (await v1(pro, { name: 'to-promote', latex_content: LIQUID, placeholder_engine: 'none', instructions: 'keep' })).json().template;
      const res = await v1(pro, { name: 'to-promote', placeholder_engine: 'liquid' });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.promoted, true);
      assert.equal(body.created, false);
      assert.equal(body.template.id, raw.id);
      assert.equal(body.template.placeholder_engine, 'liquid');
      assert.equal(body.template.instructions, 'keep');
      assert.equal(body.template.created_at, raw.created_at);
      assert.deepEqual(Object.keys(body.schema.properties), ['name', 'total']);
    });

    it('raw stays raw when a V1 save sends placeholders without placeholder_engine; refusals change nothing', async () => {
      const raw = (await v1(pro, { name: 'stays-raw', latex_content: HELLO, description: 'orig' })).json().template;
      const before = await stored(pro, raw.id);
      const refusals = [
        [{ name: 'stays-raw', latex_content: LIQUID, description: 'changed' }, 'liquid_placeholders_in_v1_template'],
        [{ name: 'stays-raw', latex_content: UNSAFE, placeholder_engine: 'liquid', description: 'changed' }, 'template_security_violation'],
        [{ name: 'stays-raw', latex_content: BROKEN, placeholder_engine: 'liquid' }, 'liquid_syntax_error'],
        [{ name: 'stays-raw', latex_content: LIQUID, placeholder_engine: 'mustache' }, 'invalid_placeholder_engine'],
        [{ name: 'stays-raw', description: 'x'.repeat(501) }, 'validation_failed'],
      ] as const;
      for (const [body, code] of refusals) {
        const res = await v1(pro, body);
        assert.equal(res.json().error, code);
        assert.deepEqual(await stored(pro, raw.id), before, `unchanged after ${code}`);
      }
      for (const [body, code] of [
        [{ latex_with_placeholders: UNSAFE }, 'template_security_violation'],
        [{ latex_with_placeholders: BROKEN }, 'liquid_syntax_error'],
      ] as const) {
        const res = await call('POST', `/api/v2/templates/${raw.id}/promote`, pro, body);
        assert.equal(res.statusCode, 422);
        assert.equal(res.json().error, code);
        assert.deepEqual(await stored(pro, raw.id), before, `unchanged after promote ${code}`);
      }
    });

    it('placeholder refuses a downgrade to none and stays unchanged', async () => {
      const created = (await call('POST', '/api/v2/templates', pro, { name: 'no-downgrade', latex_with_placeholders: LIQUID })).json();
      const before = await stored(pro, created.template.id);
      const res = await v1(pro, { name: 'no-downgrade', latex_content: HELLO, placeholder_engine: 'none' });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'engine_downgrade_not_supported');
      assert.deepEqual(await stored(pro, created.template.id), before);
      // Saving a placeholder template through V1 without an engine keeps its kind and bumps the version.
      const kept = await v1(pro, { name: 'no-downgrade', latex_content: LIQUID2 });
      assert.equal(kept.statusCode, 200);
      assert.equal(kept.json().template.placeholder_engine, 'liquid');
      assert.equal(kept.json().template.version, 2);
    });

    it('V2 create: 201 with schema and sample_data; duplicate names (any case) give name_taken', async () => {
      const res = await call('POST', '/api/v2/templates', pro, { name: 'Invoice', latex_with_placeholders: LIQUID, description: 'inv' });
      assert.equal(res.statusCode, 201);
      const body = res.json();
      assert.equal(body.template.version, 1);
      assert.equal(body.template.placeholder_engine, 'liquid');
      assert.equal(body.template.latex_with_placeholders, LIQUID);
      assert.deepEqual(body.schema, body.template.schema);
      assert.equal(body.schema.properties.total.type, 'number');
      assert.equal(typeof body.sample_data.total, 'number');
      const dup = await call('POST', '/api/v2/templates', pro, { name: 'INVOICE', latex_with_placeholders: LIQUID });
      assert.equal(dup.statusCode, 422);
      assert.equal(dup.json().error, 'name_taken');
      const unsafe = await call('POST', '/api/v2/templates', pro, { name: 'unsafe', latex_with_placeholders: UNSAFE });
      assert.equal(unsafe.json().error, 'template_security_violation');
      assert.equal(unsafe.json().rule_number, 1);
      const broken = await call('POST', '/api/v2/templates', pro, { name: 'broken', latex_with_placeholders: BROKEN });
      assert.equal(broken.json().error, 'liquid_syntax_error');
      const missing = await call('POST', '/api/v2/templates', pro, { name: 'nosrc' });
      assert.equal(missing.json().error, 'validation_failed');
      // Starter can use V2 too.
      assert.equal((await call('POST', '/api/v2/templates', starter, { name: 'Invoice', latex_with_placeholders: LIQUID })).statusCode, 201);
    });

    it('V2 list, get by id and case-insensitive name, PATCH versioning, delete', async () => {
      const created = (await call('POST', '/api/v2/templates', pro, { name: 'Letter', latex_with_placeholders: LIQUID })).json().template;
      const list = (await call('GET', '/api/v2/templates', pro)).json().templates;
      assert.ok(list.some((r: { id: number }) => r.id === created.id));
      assert.ok(list.every((r: { placeholder_engine: string }) => r.placeholder_engine === 'liquid'));
      const got = await call('GET', '/api/v2/templates/lEtTeR', pro);
      assert.equal(got.statusCode, 200);
      assert.equal(got.json().template.id, created.id);

      const described = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { description: 'changed', instructions: 'How to fill' });
      assert.equal(described.statusCode, 200);
      assert.equal(described.json().template.version, 1);
      assert.equal(described.json().template.description, 'changed');

      const same = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { latex_with_placeholders: LIQUID });
      assert.equal(same.json().template.version, 1);

      const changed = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { latex_with_placeholders: LIQUID2 });
      assert.equal(changed.statusCode, 200);
      assert.equal(changed.json().template.version, 2);
      assert.deepEqual(changed.json().schema.required, ['person']);
      assert.deepEqual(changed.json().schema.properties.person.required, ['first_name']);

      const before = await stored(pro, created.id);
      const bad = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { latex_with_placeholders: UNSAFE, description: 'no' });
      assert.equal(bad.json().error, 'template_security_violation');
      assert.deepEqual(await stored(pro, created.id), before);
      await call('POST', '/api/v2/templates', pro, { name: 'Other', latex_with_placeholders: LIQUID });
      const clash = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { name: 'other' });
      assert.equal(clash.json().error, 'name_taken');

      const renamed = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { name: 'Letter 2' });
      assert.equal(renamed.json().template.name, 'Letter 2');
      assert.equal(renamed.json().template.version, 2);

      assert.equal((await call('DELETE', `/api/v2/templates/${encodeURIComponent('letter 2')}`, pro)).statusCode, 204);
      const gone = await call('GET', `/api/v2/templates/${created.id}`, pro);
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().error, 'template_not_found');
    });

    it('promote: raw → placeholder keeps id, name, instructions, creation date; already_v2 on a placeholder', async () => {
      const raw = (await v1(pro, { name: 'Promote Me', latex_content: LIQUID, placeholder_engine: 'none', instructions: 'play' })).json().template;
      const res = await call('POST', `/api/v2/templates/${raw.id}/promote`, pro);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.promoted, true);
      assert.equal(body.template.id, raw.id);
      assert.equal(body.template.name, 'Promote Me');
      assert.equal(body.template.instructions, 'play');
      assert.equal(body.template.created_at, raw.created_at);
      assert.equal(body.template.version, 1);
      assert.ok(body.schema.properties.name);
      assert.ok(body.sample_data.name);

      const again = await call('POST', `/api/v2/templates/${raw.id}/promote`, pro);
      assert.equal(again.statusCode, 422);
      assert.equal(again.json().error, 'already_v2');

      const other2 = (await v1(pro, { name: 'Promote With Source', latex_content: HELLO })).json().template;
      const withSource = await call('POST', `/api/v2/templates/${encodeURIComponent('promote with source')}/promote`, pro, { latex_with_placeholders: LIQUID2 });
      assert.equal(withSource.statusCode, 200);
      assert.equal(withSource.json().template.latex_with_placeholders, LIQUID2);
      assert.equal(withSource.json().template.version, 2);
      assert.equal(withSource.json().template.id, other2.id);

      assert.equal((await call('POST', '/api/v2/templates/999999/promote', pro)).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'POST', url: `/api/v2/templates/${raw.id}/promote` })).statusCode, 401);
    });

    it('raw template: V2 render gives template_engine_mismatch and nothing changes', async () => {
      const raw = (await v1(pro, { name: 'raw-render', latex_content: HELLO })).json().template;
      const before = await stored(pro, raw.id);
      const res = await call('POST', `/api/v2/templates/${raw.id}/render`, pro, { data: {} });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'template_engine_mismatch');
      assert.deepEqual(await stored(pro, raw.id), before);
      assert.equal((await call('POST', '/api/v2/templates/nope/render', pro, { data: {} })).json().error, 'template_not_found');
    });
  });
}
