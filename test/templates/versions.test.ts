// Template versions over HTTP and MCP on both databases: every source save is kept, listed,
// read, rendered and restored; the plan's kept limit prunes the oldest; another account's
// template and a version not kept are 404s; deleting a template deletes its versions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PLANS } from '../../src/quota/plans.js';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { callTool } from '../mcp/call.js';

const V1 = '\\documentclass{article}\n\\begin{document}\nFirst {{ name }}.\n\\end{document}\n';
const V2 = '\\documentclass{article}\n\\begin{document}\nSecond {{ person.name }}.\n\\end{document}\n';

for (const db of DB_KINDS) {
  describe(`template versions (${db})`, () => {
    let t: TestApp;
    let pro: TestAccount;
    let starter: TestAccount;
    let other: TestAccount;

    before(async () => {
      t = await testApp({ db });
      [pro, starter, other] = await Promise.all([createAccount(t.services, 'pro'), createAccount(t.services, 'starter'), createAccount(t.services, 'pro')]);
    });
    after(() => t.close());

    const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: TestAccount, payload?: unknown) =>
      t.app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) });

    it('create, list, get, render an old version, restore — over HTTP and MCP', async () => {
      const created = (await call('POST', '/api/v2/templates', pro, { name: 'Versioned', latex_with_placeholders: V1, instructions: 'first way' })).json().template;
      const patched = await call('PATCH', `/api/v2/templates/${created.id}`, pro, { latex_with_placeholders: V2, instructions: 'second way' });
      assert.equal(patched.json().template.version, 2);
      // A change that leaves the source alone makes no version (SPEC: version counts source changes).
      assert.equal((await call('PATCH', `/api/v2/templates/${created.id}`, pro, { description: 'd' })).json().template.version, 2);

      const list = await call('GET', `/api/v2/templates/${created.id}/versions`, pro);
      assert.equal(list.statusCode, 200);
      const body = list.json();
      assert.deepEqual(body.template, { id: created.id, name: 'Versioned', version: 2 });
      assert.equal(body.kept_limit, PLANS.pro.templateVersions);
      assert.deepEqual(body.versions.map((v: { version: number; latest: boolean; placeholder_engine: string; has_instructions: boolean }) => [v.version, v.latest, v.placeholder_engine, v.has_instructions]), [
        [2, true, 'liquid', true],
        [1, false, 'liquid', true],
      ]);

      const one = await call('GET', `/api/v2/templates/versioned/versions/1`, pro);
      assert.equal(one.statusCode, 200);
      const v1 = one.json().version;
      assert.equal(v1.version, 1);
      assert.equal(v1.latex_content, V1);
      assert.equal(v1.instructions, 'first way');
      assert.deepEqual(v1.schema.required, ['name']);
      assert.deepEqual(Object.keys(v1.sample_data), ['name']);

      // MCP: the list, get_template with a version, and the latest without one.
      const listed = await callTool(t.app, pro.headers, 'list_template_versions', { id: created.id });
      assert.equal(listed.isError, undefined);
      assert.deepEqual((listed.structuredContent.versions as Array<{ version: number }>).map((v) => v.version), [2, 1]);
      const got = await callTool(t.app, pro.headers, 'get_template', { id: 'Versioned', version: 1 });
      assert.equal(got.isError, undefined, JSON.stringify(got));
      const tpl = got.structuredContent.template as Record<string, unknown>;
      assert.deepEqual([tpl.version, tpl.latex_content, tpl.instructions], [1, V1, 'first way']);
      assert.deepEqual((got.structuredContent.schema as { required: string[] }).required, ['name']);
      const latest = await callTool(t.app, pro.headers, 'get_template', { id: created.id });
      assert.equal((latest.structuredContent.template as { version: number }).version, 2);

      // Render version 1 with version 1's schema: HTTP checks the data against it (no TeX)...
      const wrongData = await call('POST', `/api/v2/templates/${created.id}/render`, pro, { version: 1, data: { person: { name: 'x' } } });
      assert.equal(wrongData.statusCode, 422);
      assert.equal(wrongData.json().error, 'schema_validation_failed');
      assert.deepEqual(wrongData.json().missing_fields, ['name']);
      // ...and MCP renders it.
      const rendered = await callTool(t.app, pro.headers, 'render', { id: created.id, version: 1, data: { name: 'Ada' } });
      assert.equal(rendered.isError, undefined, JSON.stringify(rendered.structuredContent));
      assert.deepEqual(rendered.structuredContent.template, { id: created.id, name: 'Versioned', version: 1 });

      // Restore over HTTP makes version 3 from version 1; over MCP version 4 from 2.
      const restored = await call('POST', `/api/v2/templates/${created.id}/versions/1/restore`, pro);
      assert.equal(restored.statusCode, 200);
      assert.equal(restored.json().restored_from, 1);
      assert.equal(restored.json().template.version, 3);
      assert.equal(restored.json().template.latex_content, V1);
      assert.equal(restored.json().template.instructions, 'first way');
      assert.deepEqual(restored.json().schema.required, ['name']);
      const current = (await call('GET', `/api/v2/templates/${created.id}`, pro)).json();
      assert.equal(current.template.latex_with_placeholders, V1);
      assert.deepEqual(current.schema.required, ['name']);
      const again = await callTool(t.app, pro.headers, 'restore_template_version', { id: created.id, version: 2 });
      assert.equal(again.isError, undefined, JSON.stringify(again));
      assert.equal((again.structuredContent.template as { version: number }).version, 4);
      assert.equal((await call('GET', `/api/v2/templates/${created.id}/versions/4`, pro)).json().version.latex_content, V2);
    });

    it('raw (V1) templates are versioned too; promote keeps the version and gives it the schema', async () => {
      await call('POST', '/api/v1/templates', pro, { name: 'Raw One', latex_content: HELLO });
      const saved = (await call('POST', '/api/v1/templates', pro, { name: 'raw one', latex_content: V1, placeholder_engine: 'none' })).json().template;
      assert.equal(saved.version, 2);
      const raw = (await call('GET', `/api/v2/templates/${saved.id}/versions/2`, pro)).json().version;
      assert.deepEqual([raw.placeholder_engine, raw.schema, raw.latex_content], ['none', null, V1]);
      assert.equal((await call('POST', `/api/v2/templates/${saved.id}/promote`, pro)).statusCode, 200);
      const promoted = (await call('GET', `/api/v2/templates/${saved.id}/versions/2`, pro)).json().version;
      assert.deepEqual([promoted.placeholder_engine, promoted.schema.required], ['liquid', ['name']]);
      // Version 1 was saved raw and stays so: rendering it is the raw-template error.
      const oldRaw = await callTool(t.app, pro.headers, 'render', { id: saved.id, version: 1, data: {} });
      assert.equal(oldRaw.structuredContent.error, 'template_engine_mismatch');
    });

    it("prunes the oldest past the plan's kept limit, never the latest; a version not kept is 404", async () => {
      const limit = PLANS.starter.templateVersions;
      const id = (await call('POST', '/api/v1/templates', starter, { name: 'Busy', latex_content: HELLO })).json().template.id;
      for (let n = 2; n <= limit + 2; n++) {
        const res = await call('POST', '/api/v1/templates', starter, { name: 'Busy', latex_content: HELLO.replace('Quire', `Quire ${n}`) });
        assert.equal(res.json().template.version, n);
      }
      const versions = (await call('GET', `/api/v2/templates/${id}/versions`, starter)).json().versions.map((v: { version: number }) => v.version);
      assert.equal(versions.length, limit);
      assert.equal(versions[0], limit + 2);
      assert.equal(versions.at(-1), 3);

      for (const [method, url] of [
        ['GET', `/api/v2/templates/${id}/versions/1`],
        ['POST', `/api/v2/templates/${id}/versions/2/restore`],
        ['GET', `/api/v2/templates/${id}/versions/${limit + 3}`],
      ] as const) {
        const res = await call(method, url, starter);
        assert.equal(res.statusCode, 404, url);
        assert.equal(res.json().error, 'template_version_not_found');
        assert.equal(res.json().kept_versions.length, limit);
      }
      const viaMcp = await callTool(t.app, starter.headers, 'get_template', { id, version: 1 });
      assert.equal(viaMcp.isError, true);
      assert.equal(viaMcp.structuredContent.error, 'template_version_not_found');

      // A plan of one kept version still keeps the latest.
      const list = (await call('GET', `/api/v2/templates/${id}/versions`, starter)).json();
      assert.equal(list.versions[0].latest, true);
    });

    it("another account's template versions are 404 template_not_found; delete removes the versions", async () => {
      const mine = (await call('POST', '/api/v2/templates', pro, { name: 'Mine', latex_with_placeholders: V1 })).json().template;
      for (const [method, url] of [
        ['GET', `/api/v2/templates/${mine.id}/versions`],
        ['GET', `/api/v2/templates/${mine.id}/versions/1`],
        ['POST', `/api/v2/templates/${mine.id}/versions/1/restore`],
      ] as const) {
        const res = await call(method, url, other);
        assert.equal(res.statusCode, 404, url);
        assert.equal(res.json().error, 'template_not_found');
      }
      const viaMcp = await callTool(t.app, other.headers, 'list_template_versions', { id: mine.id });
      assert.equal(viaMcp.structuredContent.error, 'template_not_found');
      const rendered = await callTool(t.app, other.headers, 'render', { id: mine.id, version: 1, data: { name: 'x' } });
      assert.equal(rendered.structuredContent.error, 'template_not_found');

      assert.equal((await call('DELETE', `/api/v2/templates/${mine.id}`, pro)).statusCode, 204);
      const left = await t.services.db.kysely.selectFrom('template_versions').selectAll().where('template_id', '=', mine.id).execute();
      assert.deepEqual(left, []);
    });
  });
}
