// The template policy attacked through the API: every bypass family of issue 13 is refused with
// 422 template_security_violation naming its rule, when saved as a V2 template, when saved
// through V1 with placeholder_engine "liquid", and when smuggled in as a `| raw` value at
// render time (then nothing is compiled or charged). The file the payloads aim at is a canary
// with random content outside any job; it never appears in a response.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { SECURITY_RULES } from '../../src/templates/security.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { BYPASSES } from '../templates/bypasses.js';

const CANARY_TEXT = `canary-${randomBytes(16).toString('hex')}`;
const CANARY = join(tmpdir(), `quire-canary-${randomBytes(6).toString('hex')}`);
const doc = (body: string) => `\\documentclass{article}\n${body}\n\\begin{document}\nHi\n\\end{document}\n`;
const attacks = BYPASSES.map((b) => ({ ...b, body: b.body.replaceAll('/etc/passwd', CANARY) }));
const ruleNumber = (rule: string) => SECURITY_RULES.find((r) => r.id === rule)!.number;

describe('template policy over HTTP', () => {
  let t: TestApp;
  let pro: TestAccount;
  const bodies: string[] = [];

  before(async () => {
    writeFileSync(CANARY, CANARY_TEXT);
    t = await testApp({ env: { QUIRE_RENDER_PER_MINUTE: '10000' } });
    pro = await createAccount(t.services, 'pro');
  });
  after(async () => {
    for (const body of bodies) assert.ok(!body.includes(CANARY_TEXT), 'the canary never comes back');
    rmSync(CANARY, { force: true });
    await t.close();
  });

  const inject = async (options: InjectOptions) => {
    const res = await t.app.inject(options);
    bodies.push(res.body);
    return res;
  };
  const refused = (res: { statusCode: number; json(): Record<string, unknown> }, rule: string, line: number, what: string) => {
    assert.equal(res.statusCode, 422, what);
    const body = res.json();
    assert.equal(body.error, 'template_security_violation', what);
    assert.equal(body.rule, rule, `${what}: ${String(body.message)}`);
    assert.equal(body.rule_number, ruleNumber(rule), what);
    assert.equal(body.line, line, what);
    assert.match(String(body.message), new RegExp(`^Line ${line}: .*\\(rule ${ruleNumber(rule)}: ${rule}\\)\\.$`), what);
  };
  const templateCount = async () =>
    ((await inject({ method: 'GET', url: '/api/v1/templates', headers: pro.headers })).json().templates as unknown[]).length;
  const used = async () => (await inject({ method: 'GET', url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;

  it('V2 save refuses each family and stores nothing', async () => {
    const before = await templateCount();
    for (const [i, attack] of attacks.entries()) {
      const res = await inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: `v2-${i}`, latex_with_placeholders: doc(attack.body) } });
      refused(res, attack.rule, 2, `${attack.family}: ${attack.body}`);
    }
    assert.equal(await templateCount(), before);
  });

  it('V1 save with placeholder_engine "liquid" refuses each family and stores nothing', async () => {
    const before = await templateCount();
    for (const [i, attack] of attacks.entries()) {
      const res = await inject({
        method: 'POST',
        url: '/api/v1/templates',
        headers: pro.headers,
        payload: { name: `v1-${i}`, latex_content: doc(attack.body), placeholder_engine: 'liquid' },
      });
      refused(res, attack.rule, 2, `${attack.family}: ${attack.body}`);
    }
    assert.equal(await templateCount(), before);
  });

  it('a `| raw` value carrying each family is refused at render, uncharged; a harmless raw value compiles', async () => {
    const source = '\\documentclass{article}\n{{ preamble | raw }}\n\\begin{document}\n{{ body | raw }}\n\\end{document}\n';
    const created = await inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'raw', latex_with_placeholders: source } });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().template.id as number;
    const usedBefore = await used();
    for (const attack of attacks) {
      const res = await inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { preamble: attack.body, body: 'Hi' } } });
      refused(res, attack.rule, 2, `raw ${attack.family}: ${attack.body}`);
    }
    // The same payloads in the body of the document land on its line.
    const inBody = attacks.find((a) => a.family === 'link')!;
    refused(
      await inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { preamble: '', body: inBody.body } } }),
      inBody.rule,
      4,
      'raw in the body',
    );
    assert.equal(await used(), usedBefore, 'refused renders are not charged');

    const ok = await inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { preamble: '\\usepackage{xcolor}', body: '\\textcolor{red}{\\textbf{fine}}' } } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(await used(), usedBefore + 1);
  });
});
