// Validate over HTTP and MCP on both databases: each kind of finding with its line, the
// compile's own codes for request and plan problems, the template policy, render data against a
// template schema, no charge, and the per-caller rate limit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { callTool } from '../mcp/call.js';

type Finding = { kind: string; severity: string; code?: string; line?: number; column?: number; name?: string; suggestions?: string[]; chktex?: number; file?: string };
type Report = { valid: boolean; findings: Finding[]; checked: string[] };

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

// Line 1 a misspelt class, line 2 a misspelt package, line 5 chktex's ellipsis and quote
// warnings, line 6 a chapter not sent, line 7 an image not sent and one that is, line 8 a
// TeX Live file (found, so no finding).
const BROKEN = [
  '\\documentclass{artcle}',
  '\\usepackage{graphix}',
  '\\usepackage{amsmath}',
  '\\begin{document}',
  'Hello "world" ...',
  '\\input{chapters/one}',
  '\\includegraphics{logo}\\includegraphics{sent.png}',
  '\\includegraphics{example-image-a}',
  '\\end{document}',
  '',
].join('\n');

const pick = (report: Report, kind: string) => report.findings.filter((f) => f.kind === kind);

for (const db of DB_KINDS) {
  describe(`validate (${db})`, () => {
    let t: TestApp;
    let pro: TestAccount;
    let free: TestAccount;

    before(async () => {
      t = await testApp({ db });
      [pro, free] = await Promise.all([createAccount(t.services, 'pro'), createAccount(t.services, 'free')]);
    });
    after(() => t.close());

    const validate = (who: TestAccount | null, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/api/v1/validate', headers: who?.headers ?? {}, payload });

    it('finds each kind with its line: missing class and package with the closest names, chktex, missing files', async () => {
      const res = await validate(pro, { latex: BROKEN, assets: { 'sent.png': PNG } });
      assert.equal(res.statusCode, 200, res.body);
      const report = res.json() as Report;
      assert.equal(report.valid, false);
      assert.deepEqual(report.checked, ['request', 'chktex', 'packages', 'files']);
      assert.deepEqual(pick(report, 'request'), []);
      const [cls] = pick(report, 'missing_class');
      assert.deepEqual([cls?.name, cls?.line, cls?.severity, cls?.suggestions?.[0]], ['artcle', 1, 'error', 'article']);
      const [pkg] = pick(report, 'missing_package');
      assert.deepEqual([pkg?.name, pkg?.line, pkg?.suggestions?.[0]], ['graphix', 2, 'graphicx']);
      assert.equal(pick(report, 'missing_package').length, 1, 'amsmath is installed');
      const chktex = pick(report, 'chktex');
      assert.ok(chktex.some((f) => f.line === 5 && f.chktex === 11 && f.severity === 'warning'), JSON.stringify(chktex));
      assert.ok(chktex.some((f) => f.line === 5 && f.chktex === 18 && f.column === 7), JSON.stringify(chktex));
      assert.deepEqual(
        pick(report, 'missing_file').map((f) => [f.name, f.line]),
        [
          ['chapters/one', 6],
          ['logo', 7],
        ],
      );

      // Through MCP: the same report.
      const viaMcp = await callTool(t.app, pro.headers, 'validate', { latex: BROKEN, assets: { 'sent.png': PNG } });
      assert.equal(viaMcp.isError, undefined);
      assert.deepEqual(viaMcp.structuredContent, report);
      assert.match(viaMcp.content[0]!.text!, /Would fail; fix the errors:\n- error missing_class line 1/);
    });

    it('a clean document is valid; a file sent in `files` is found', async () => {
      const latex = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/one}\n\\end{document}\n';
      const report = (await validate(pro, { latex, files: { 'chapters/one.tex': 'Text.\n' } })).json() as Report;
      assert.deepEqual(report, { valid: true, findings: [], checked: ['request', 'chktex', 'packages', 'files'] });
    });

    it("request and plan problems carry the compile's codes: not_latex_source, compiler, size, assets", async () => {
      const anon = (await validate(null, { latex: 'Just some text.', compiler: 'xelatex', assets: { 'a.png': PNG } })).json() as Report;
      assert.equal(anon.valid, false);
      assert.deepEqual(
        pick(anon, 'request').map((f) => f.code),
        ['not_latex_source', 'compiler_not_available', 'assets_not_available_anonymously'],
      );
      const big = (await validate(free, { latex: `${HELLO}%${'x'.repeat(400 * 1024)}\n` })).json() as Report;
      assert.deepEqual(pick(big, 'request').map((f) => f.code), ['latex_too_large']);
      const lualatex = await callTool(t.app, free.headers, 'validate', { latex: HELLO, compiler: 'lualatex' });
      assert.deepEqual((lualatex.structuredContent.findings as Finding[]).map((f) => f.code), ['compiler_not_available']);
      // A missing or non-string source is a bad request, not a finding.
      const missing = await validate(pro, { compiler: 'pdflatex' });
      assert.equal(missing.statusCode, 422);
      assert.equal(missing.json().error, 'validation_failed');
    });

    it('a placeholder source is checked against the template security policy', async () => {
      const unsafe = '\\documentclass{article}\n\\begin{document}\n{{ name }}\n\\immediate\\write18{id}\n\\end{document}\n';
      const report = (await validate(pro, { latex: unsafe, placeholder_engine: 'liquid' })).json() as Report;
      const [policy] = pick(report, 'template');
      assert.equal(policy?.code, 'template_security_violation');
      assert.equal(policy?.line, 4);
      assert.ok(report.checked.includes('template'));
      const viaMcp = await callTool(t.app, pro.headers, 'validate', { latex: unsafe, placeholder_engine: 'liquid' });
      assert.equal((viaMcp.structuredContent.findings as Finding[]).find((f) => f.kind === 'template')?.code, 'template_security_violation');
    });

    it('render data against a saved template (and a kept version) over HTTP and MCP', async () => {
      const source = '\\documentclass{article}\n\\begin{document}\n{{ name }} owes {{ total | currency }}.\n\\end{document}\n';
      const id = (await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'Dun', latex_with_placeholders: source } })).json().template.id;
      const check = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/validate`, headers: pro.headers, payload });
      const badRes = await check({ data: { total: "lots" } });
      assert.equal(badRes.statusCode, 200, badRes.body);
      const bad = badRes.json() as Report;
      assert.equal(bad.valid, false);
      assert.deepEqual(bad.findings.map((f) => [f.kind, f.name, f.code]), [
        ['data', 'name', 'schema_validation_failed'],
        ['data', 'total', 'schema_validation_failed'],
      ]);
      assert.deepEqual(await check({ data: { name: 'Ada', total: 12.5 } }).then((r) => r.json()), { valid: true, findings: [], checked: ['request', 'data'] });
      const notKept = await check({ data: {}, version: 9 });
      assert.equal(notKept.statusCode, 404);
      assert.equal(notKept.json().error, 'template_version_not_found');
      const viaMcp = await callTool(t.app, pro.headers, 'validate', { template: 'dun', data: { name: 'Ada' } });
      assert.equal(viaMcp.isError, undefined, JSON.stringify(viaMcp.structuredContent));
      assert.deepEqual((viaMcp.structuredContent.findings as Finding[]).map((f) => f.name), ['total']);
      const anonymous = await callTool(t.app, {}, 'validate', { template: id, data: {} });
      assert.equal(anonymous.isError, true);
      assert.equal(anonymous.structuredContent.error, 'missing_api_key');
    });

    it('charges nothing', async () => {
      const before = await t.services.usage.monthly(pro.id);
      await validate(pro, { latex: HELLO });
      await callTool(t.app, pro.headers, 'validate', { latex: HELLO });
      assert.deepEqual(await t.services.usage.monthly(pro.id), before);
      const usage = (await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: pro.headers })).json();
      assert.equal(usage.usage.used_this_month, 0);
    });

    it('is rate-limited per caller across HTTP and MCP (429 validate_rate_limited, Retry-After)', async () => {
      const limit = t.services.config.validatePerMinute;
      t.services.config.validatePerMinute = 2;
      try {
        const caller = await createAccount(t.services, 'starter');
        const first = await validate(caller, { latex: HELLO });
        assert.equal(first.statusCode, 200, first.body);
        assert.equal((await callTool(t.app, caller.headers, 'validate', { latex: HELLO })).isError, undefined);
        const refused = await validate(caller, { latex: HELLO });
        assert.equal(refused.statusCode, 429);
        assert.equal(refused.json().error, 'validate_rate_limited');
        assert.equal(refused.json().limit, 2);
        assert.ok(Number(refused.headers['retry-after']) >= 1);
        const viaMcp = await callTool(t.app, caller.headers, 'validate', { latex: HELLO });
        assert.equal(viaMcp.structuredContent.error, 'validate_rate_limited');
        // Another caller has a window of its own.
        assert.equal((await validate(await createAccount(t.services, 'free'), { latex: HELLO })).statusCode, 200);
      } finally {
        t.services.config.validatePerMinute = limit;
      }
    });
  });
}
