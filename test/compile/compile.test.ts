// POST /api/v1/compile and GET /api/v1/pdfs/{id} end to end: real TeX, real SQLite, the
// real app. Every refusal is checked to cost nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { inflateSync } from 'fflate';
import { ManualClock } from '../../src/clock.js';
import { signedPdfUrl } from '../../src/compile/links.js';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import type { PlanName } from '../../src/quota/plans.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const BROKEN = '\\documentclass{article}\n\\begin{document}\nHello \\undefinedthing\n\\end{document}\n';
const pagesDoc = (n: number) =>
  `\\documentclass{article}\n\\begin{document}\n${Array.from({ length: n }, (_, i) => `Page ${i + 1}.`).join('\\newpage\n')}\n\\end{document}\n`;

function pdfText(pdf: Buffer): string {
  return execFileSync('pdftotext', ['-', '-'], { input: pdf }).toString('utf8');
}

function path(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

async function setMonthlyUsed(t: TestApp, account: TestAccount, used: number, clock: ManualClock): Promise<void> {
  const key = monthlyCompilesKey(account.id, clock.now());
  await t.services.db.kysely.deleteFrom('counters').where('key', '=', key).execute();
  await t.services.db.kysely
    .insertInto('counters')
    .values({ key, used, reserved: 0, expires_at: '2099-01-01T00:00:00.000Z' })
    .execute();
}

describe('compile', () => {
  const clock = new ManualClock(new Date('2026-03-10T10:00:00Z'));
  let t: TestApp;
  const accounts = {} as Record<PlanName, TestAccount>;
  const compile = (payload: unknown, options: { headers?: Record<string, string>; ip?: string } = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/compile',
      payload: payload as object,
      headers: options.headers,
      remoteAddress: options.ip ?? '192.0.2.1',
    });

  before(async () => {
    t = await testApp({ clock, env: { QUIRE_ANON_HOURLY_CEILING: '1000' } });
    for (const plan of ['free', 'starter', 'pro', 'business'] as const) accounts[plan] = await createAccount(t.services, plan);
  });
  after(() => t.close());

  test('anonymous: a PDF behind a 1-hour signed link, with the keyless fields', async () => {
    const res = await compile({ latex: HELLO }, { ip: '192.0.2.10' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.match(body.job_id, /^[0-9a-f-]{36}$/);
    assert.equal(body.pages, 1);
    assert.equal(body.compiler, 'pdflatex');
    assert.equal(body.anonymous, true);
    assert.equal(body.remaining_today, 2);
    assert.equal(typeof body.note, 'string');
    assert.equal(body.next_step.action, 'obtain_api_key');
    // Sign-up is closed by default: no step points at a page that would turn the caller away.
    assert.equal(body.next_step.signup_url, undefined);
    assert.equal(body.upgrade_url, 'http://quire.test/pricing');
    assert.equal(body.next_step.env_var, 'QUIRE_API_KEY');
    assert.equal(body.studio_url, undefined);
    assert.equal(body.expires_at, '2026-03-10T11:00:00.000Z');
    assert.equal(body.assets_count, 0);
    assert.deepEqual(body.ephemeral_assets_used, []);
    assert.deepEqual(body.stored_assets_used, []);
    assert.ok(Number.isInteger(body.compilation_time_ms));
    assert.equal(body.usage.remaining_today, 2);

    const pdf = await t.app.inject({ method: 'GET', url: path(body.pdf_url) });
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    assert.equal(Number(pdf.headers['content-length']), pdf.rawPayload.length);
    assert.match(pdfText(pdf.rawPayload), /Hello, Quire\./);

    const head = await t.app.inject({ method: 'HEAD', url: path(body.pdf_url) });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], pdf.headers['content-length']);
    assert.equal(head.rawPayload.length, 0);

    const range = await t.app.inject({ method: 'GET', url: path(body.pdf_url), headers: { range: 'bytes=0-4' } });
    assert.equal(range.statusCode, 206);
    assert.equal(range.headers['content-range'], `bytes 0-4/${pdf.rawPayload.length}`);
    assert.equal(range.body, '%PDF-');
    const tail = await t.app.inject({ method: 'GET', url: path(body.pdf_url), headers: { range: 'bytes=-5' } });
    assert.equal(tail.statusCode, 206);
    assert.deepEqual(tail.rawPayload, pdf.rawPayload.subarray(-5));
    const beyond = await t.app.inject({ method: 'GET', url: path(body.pdf_url), headers: { range: `bytes=${pdf.rawPayload.length}-` } });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${pdf.rawPayload.length}`);
  });

  test('signed links: tampered 403, unknown 404, expired 410 and swept by the janitor', async () => {
    const res = await compile({ latex: HELLO }, { ip: '192.0.2.11' });
    const url = new URL(res.json().pdf_url);
    const id = url.pathname.split('/').pop()!;
    const sig = url.searchParams.get('sig')!;
    const exp = url.searchParams.get('exp')!;
    const get = (query: string, pdfId = id) => t.app.inject({ method: 'GET', url: `/api/v1/pdfs/${pdfId}?${query}` });

    for (const query of [
      `exp=${exp}&sig=${sig.slice(0, -2)}xx`,
      `exp=${Number(exp) + 3600}&sig=${sig}`,
      `exp=${exp}`,
      '',
      `exp=abc&sig=${sig}`,
    ]) {
      const bad = await get(query);
      assert.equal(bad.statusCode, 403, query);
      assert.equal(bad.json().error, 'invalid_signature');
    }
    const otherId = '00000000-0000-4000-8000-000000000000';
    const wrongId = await get(`exp=${exp}&sig=${sig}`, otherId);
    assert.equal(wrongId.statusCode, 403);

    const unknown = await t.app.inject({
      method: 'GET',
      url: path(signedPdfUrl('http://quire.test', t.services.config.secret, otherId, new Date(clock.now().getTime() + 60_000))),
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'not_found');

    clock.advance(3600_000);
    const expired = await get(`exp=${exp}&sig=${sig}`);
    assert.equal(expired.statusCode, 410);
    assert.equal(expired.json().error, 'link_expired');
    assert.ok((await t.services.pdfs.sweep()) >= 1);
    assert.equal(await t.services.pdfs.find(id), undefined);
    assert.equal(await t.services.blobs.size(`pdfs/${id}.pdf`), null);
    clock.set('2026-03-10T10:00:00Z');
  });

  test('each engine compiles for an account, with studio_url and monthly usage', async () => {
    const pro = accounts.pro;
    for (const [i, compiler] of (['pdflatex', 'xelatex', 'lualatex'] as const).entries()) {
      const res = await compile({ latex: HELLO, compiler }, { headers: pro.headers });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.compiler, compiler);
      assert.equal(body.pages, 1);
      assert.equal(body.anonymous, undefined);
      assert.equal(body.remaining_today, undefined);
      assert.equal(body.expires_at, '2026-03-11T10:00:00.000Z');
      assert.deepEqual(body.usage, {
        plan: 'pro',
        monthly_limit: 2000,
        used_this_month: i + 1,
        compilations_this_month: i + 1,
        grace_used: 0,
        resets_at: '2026-04-01T00:00:00.000Z',
      });
      const fragment = new URL(body.studio_url).hash.slice(1);
      const params = new URLSearchParams(fragment);
      assert.equal(params.get('compiler'), compiler);
      assert.equal(Buffer.from(inflateSync(Buffer.from(params.get('src')!, 'base64url'))).toString('utf8'), HELLO);
      assert.ok(body.studio_url.startsWith('http://quire.test/studio#'));
    }
  });

  test('each engine reports a compile error as compilation_failed with log, line and hint, for free', async () => {
    const pro = accounts.pro;
    const before = (await t.services.usage.monthly(pro.id)).used;
    for (const compiler of ['pdflatex', 'xelatex', 'lualatex'] as const) {
      const res = await compile({ latex: BROKEN, compiler }, { headers: pro.headers });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.equal(body.error, 'compilation_failed');
      assert.equal(body.line, 3);
      assert.match(body.log, /Undefined control sequence/);
      assert.equal(typeof body.agent_hint, 'string');
      assert.equal(typeof body.retryable, 'boolean');
      assert.equal(body.plan, 'pro');
      if (body.diagnosis) assert.equal(body.diagnosis.error_class, 'undefined_command');
      // SPEC §2.3: a CompileFailure carries usage, and the failure cost nothing.
      assert.deepEqual(body.usage, {
        plan: 'pro',
        monthly_limit: 2000,
        used_this_month: before,
        compilations_this_month: before,
        grace_used: 0,
        resets_at: '2026-04-01T00:00:00.000Z',
      });
    }
    assert.equal((await t.services.usage.monthly(pro.id)).used, before);
  });

  test('request rules refuse bad input before TeX and cost nothing', async () => {
    const { free, pro } = accounts;
    const usedBefore = (await t.services.usage.monthly(free.id)).used;
    const cases: Array<[unknown, Record<string, string> | undefined, number, string]> = [
      [{}, free.headers, 422, 'validation_failed'],
      [{ latex: 42 }, free.headers, 422, 'validation_failed'],
      [{ latex: HELLO, compiler: 'tectonic' }, free.headers, 422, 'validation_failed'],
      [{ latex: 'Just some *markdown* text.' }, free.headers, 422, 'not_latex_source'],
      [{ latex: HELLO, compiler: 'xelatex' }, undefined, 403, 'compiler_not_available'],
      [{ latex: HELLO, compiler: 'lualatex' }, free.headers, 403, 'compiler_not_available'],
      [{ latex: HELLO + '%'.repeat(30 * 1024) }, undefined, 413, 'latex_too_large'],
      [{ latex: HELLO + '%'.repeat(300 * 1024) }, pro.headers, 413, 'latex_too_large'],
    ];
    for (const [payload, headers, status, code] of cases) {
      const res = await compile(payload, { headers, ip: '192.0.2.50' });
      assert.equal(res.statusCode, status, `${code}: ${res.body}`);
      assert.equal(res.json().error, code);
    }
    const notLatex = (await compile({ latex: 'plain text' }, { headers: free.headers })).json();
    assert.ok(Array.isArray(notLatex.requirements) && notLatex.requirements.length > 0);
    assert.match(notLatex.example_template, /\\documentclass/);
    const tooLarge = (await compile({ latex: HELLO + '%'.repeat(30 * 1024) }, { ip: '192.0.2.50' })).json();
    assert.equal(tooLarge.limit, 30720);
    assert.equal(tooLarge.plan, 'anonymous');
    const hardCap = (await compile({ latex: HELLO + '%'.repeat(300 * 1024) }, { headers: pro.headers })).json();
    assert.equal(hardCap.limit, 307200);
    const gated = (await compile({ latex: HELLO, compiler: 'lualatex' }, { headers: free.headers })).json();
    assert.equal(gated.plan, 'free');
    assert.equal(gated.plan_required, 'pro');
    assert.equal(gated.upgrade_url, 'http://quire.test/pricing');

    const badKey = await compile({ latex: HELLO }, { headers: { authorization: `Bearer svc_${'0'.repeat(48)}` } });
    assert.equal(badKey.statusCode, 401);
    assert.equal((await t.services.usage.monthly(free.id)).used, usedBefore);
    const anon = await compile({ latex: HELLO }, { ip: '192.0.2.50' });
    assert.equal(anon.json().remaining_today, 2, 'refusals did not use the anonymous quota');
  });

  test('Business compiles sources up to its own 1 MB; 300 KB only bounds the smaller plans\' size previews', async () => {
    const { business, pro } = accounts;
    // Comment lines of 1 KiB: TeX reads a line into a buffer of limited size.
    const padded = (kib: number) => HELLO + ('%'.repeat(1023) + '\n').repeat(kib);
    const large = padded(700);
    const res = await compile({ latex: large }, { headers: business.headers });
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const body = res.json();
    assert.equal(body.pages, 1);
    assert.equal(body.preview, undefined, 'within the plan: a full compile, not a preview');

    const over = await compile({ latex: padded(1024) }, { headers: business.headers });
    assert.equal(over.statusCode, 413);
    assert.equal(over.json().error, 'latex_too_large');
    assert.equal(over.json().limit, 1024 * 1024);
    assert.equal(over.json().plan_required, null);

    const proOver = (await compile({ latex: large }, { headers: pro.headers })).json();
    assert.equal(proOver.error, 'latex_too_large');
    assert.equal(proOver.limit, 300 * 1024);
    assert.equal(proOver.plan_required, 'business');
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: business.headers })).json();
    assert.equal(usage.limits.max_latex_bytes_per_document, 1024 * 1024);
  });

  test('page limit: 422 page_limit_exceeded with pages, limit, plan and upgrade_url', async () => {
    const res = await compile({ latex: pagesDoc(4) }, { ip: '192.0.2.60' });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.error, 'page_limit_exceeded');
    assert.equal(body.pages, 4);
    assert.equal(body.limit, 3);
    assert.equal(body.plan, 'anonymous');
    assert.equal(body.upgrade_url, 'http://quire.test/pricing');
    assert.deepEqual(body.usage, { daily_limit: 3, used_today: 0, remaining_today: 3, resets_at: '2026-03-11T00:00:00.000Z' });
    const ok = await compile({ latex: HELLO }, { ip: '192.0.2.60' });
    assert.equal(ok.json().remaining_today, 2);
  });

  test('a PDF over the plan size: 422 pdf_too_large with limit and plan, for free', async () => {
    const big =
      '\\pdfcompresslevel=0 \\pdfobjcompresslevel=0\n\\documentclass{article}\n\\begin{document}\n' +
      '\\def\\a{0123456789012345678901234567890123456789012345678901234567890123}\\edef\\b{\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a}' +
      '\\count1=0 \\loop\\immediate\\pdfobj stream {\\b\\b}\\advance\\count1 1 \\ifnum\\count1<6000 \\repeat x\n\\end{document}\n';
    const res = await compile({ latex: big }, { ip: '192.0.2.80' });
    assert.equal(res.statusCode, 422, res.body.slice(0, 300));
    const body = res.json();
    assert.equal(body.error, 'pdf_too_large');
    assert.equal(body.limit, 10 * 1024 * 1024);
    assert.equal(body.plan, 'anonymous');
    const ok = await compile({ latex: HELLO }, { ip: '192.0.2.80' });
    assert.equal(ok.json().remaining_today, 2);
  });

  test('anonymous: 3 successful compiles per address per UTC day, failures free', async () => {
    const ip = '192.0.2.70';
    assert.equal((await compile({ latex: BROKEN }, { ip })).statusCode, 422);
    for (const remaining of [2, 1, 0]) {
      const res = await compile({ latex: HELLO }, { ip });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().remaining_today, remaining);
    }
    const refused = await compile({ latex: HELLO }, { ip });
    assert.equal(refused.statusCode, 429);
    const body = refused.json();
    assert.equal(body.error, 'anonymous_quota_exhausted');
    assert.equal(body.limit, 3);
    assert.equal(body.resets_at, '2026-03-11T00:00:00.000Z');
    assert.deepEqual(body.next_step, {
      action: 'obtain_api_key',
      env_var: 'QUIRE_API_KEY',
      header: 'Authorization: Bearer <key>',
      card_required: false,
    });
    const otherIp = await compile({ latex: HELLO }, { ip: '192.0.2.71' });
    assert.equal(otherIp.statusCode, 200);
    clock.set('2026-03-11T00:00:01Z');
    const nextDay = await compile({ latex: HELLO }, { ip });
    assert.equal(nextDay.statusCode, 200);
    assert.equal(nextDay.json().remaining_today, 2);
    clock.set('2026-03-10T10:00:00Z');
  });

  test('monthly limit: paid plans get a grace buffer, then 429 rate_limit; free gets 429 at its limit', async () => {
    const { starter, free } = accounts;
    await setMonthlyUsed(t, starter, 500, clock);
    const grace = await compile({ latex: HELLO }, { headers: starter.headers });
    assert.equal(grace.statusCode, 200, grace.body);
    const body = grace.json();
    assert.equal(body.quota_grace, true);
    assert.equal(body.grace_remaining, 49);
    assert.equal(typeof body.warning, 'string');
    assert.equal(body.upgrade_url, 'http://quire.test/pricing');
    // Grace compiles are not charged: the charged count stops at the limit, grace is its own.
    assert.equal(body.usage.used_this_month, 500);
    assert.equal(body.usage.compilations_this_month, 500);
    assert.equal(body.usage.grace_used, 1);
    const usage = (await t.app.inject({ url: '/api/v1/usage', headers: starter.headers })).json().usage;
    assert.deepEqual(usage, { monthly_limit: 500, used_this_month: 500, grace_used: 1, resets_at: '2026-04-01T00:00:00.000Z' });

    await setMonthlyUsed(t, starter, 550, clock);
    const refused = await compile({ latex: HELLO }, { headers: starter.headers });
    assert.equal(refused.statusCode, 429);
    const error = refused.json();
    assert.equal(error.error, 'rate_limit');
    assert.equal(error.grace_allowance, 50);
    assert.equal(error.monthly_limit, 500);
    assert.equal(error.used_this_month, 500);
    assert.equal(error.used, 500);
    assert.equal(error.grace_used, 50);
    assert.equal(error.resets_at, '2026-04-01T00:00:00.000Z');
    assert.equal(error.upgrade_url, 'http://quire.test/pricing');
    assert.equal(error.next_step.action, 'obtain_api_key');

    await setMonthlyUsed(t, free, 50, clock);
    const freeRefused = await compile({ latex: HELLO }, { headers: free.headers });
    assert.equal(freeRefused.statusCode, 429);
    assert.equal(freeRefused.json().error, 'rate_limit');
    assert.equal(freeRefused.json().grace_allowance, 0);
    await setMonthlyUsed(t, free, 0, clock);
  });
});

describe('compile capacity', () => {
  let t: TestApp;
  let pro: TestAccount;
  before(async () => {
    t = await testApp({ env: { QUIRE_ANON_HOURLY_CEILING: '1', QUIRE_COMPILE_CONCURRENCY: '1', QUIRE_COMPILE_QUEUE: '0' } });
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  test('the keyless hourly ceiling gives 503 anonymous_capacity_exhausted, never to a key', async () => {
    const first = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, remoteAddress: '198.51.100.1' });
    assert.equal(first.statusCode, 200);
    const second = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, remoteAddress: '198.51.100.2' });
    assert.equal(second.statusCode, 503);
    const body = second.json();
    assert.equal(body.error, 'anonymous_capacity_exhausted');
    assert.equal(body.retryable, true);
    assert.ok(body.retry_after_seconds > 0);
    assert.equal(second.headers['retry-after'], String(body.retry_after_seconds));
    const keyed = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, headers: pro.headers });
    assert.equal(keyed.statusCode, 200);
    // The refused address kept its daily quota.
    assert.equal((await t.services.counters.get(`compiles:anon:198.51.100.2:${new Date().toISOString().slice(0, 10)}`)).used, 0);
  });

  test('a job over its time is stopped with compilation_timeout; a full pool answers 503 server_busy', async () => {
    const caller = { kind: 'account' as const, ip: '127.0.0.1', ...(await t.services.accounts.authenticate(pro.key))! };
    const loop = t.services.compile.compile(caller, { latex: '\\documentclass{article}\\begin{document}\\def\\x{\\x}\\x\\end{document}' }, { deadline: Date.now() + 1500 });
    // Not the source compiled above: that one the result cache answers without a slot.
    const busy = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: `${HELLO}% busy` }, headers: pro.headers });
    assert.equal(busy.statusCode, 503);
    assert.equal(busy.json().error, 'server_busy');
    assert.ok(Number(busy.headers['retry-after']) > 0);
    await assert.rejects(loop, (err: { code?: string; details?: Record<string, unknown> }) => {
      assert.equal(err.code, 'compilation_timeout');
      assert.equal(err.details?.retryable, false);
      return true;
    });
    assert.equal((await t.services.usage.monthly(pro.id)).used, 1);
  });
});

describe('anonymous next_step on a server with open sign-up', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { QUIRE_SIGNUP: 'open' } });
  });
  after(() => t.close());

  test('points at the sign-up page, which is open', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO }, remoteAddress: '198.51.100.30' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.next_step.action, 'obtain_api_key');
    assert.equal(body.next_step.signup_url, 'http://quire.test/signup');
    assert.equal(body.upgrade_url, 'http://quire.test/signup');
    const page = await t.app.inject({ url: '/api/v1/signup', method: 'POST', payload: { email: 'next-step@example.com' } });
    assert.equal(page.statusCode, 201, 'the page the step names takes sign-ups');
  });
});
