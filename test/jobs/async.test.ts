// Async compile and render with real TeX and a real webhook receiver on loopback, on SQLite and
// PostgreSQL: 202 then the stored synchronous body, Standard Webhooks signatures (also after a
// rotation), retries after a 500 and after a timeout with every attempt in the job, exactly one
// charge under client and delivery retries, Idempotency-Key replays, refusals before queueing,
// ownership (404), anonymous refusal, and a job interrupted by a restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { createAccount, DB_KINDS, HELLO, testApp, testServices, type TestAccount, type TestApp } from '../helpers.js';
import { startReceiver, waitForJob } from './receiver.js';

const ENV = { QUIRE_WEBHOOK_ALLOW_PRIVATE: '1', QUIRE_WEBHOOK_ALLOW_HTTP: '1' };

for (const db of DB_KINDS) {
  describe(`async jobs and webhooks (${db})`, () => {
    let t: TestApp;
    let pro: TestAccount;
    let other: TestAccount;

    before(async () => {
      t = await testApp({ db, env: ENV });
      t.services.asyncJobs.deliveries.timings = { timeoutMs: 1000, baseDelayMs: 100, maxAttempts: 4, maxRedirects: 3, pollMs: 200 };
      pro = await createAccount(t.services, 'pro');
      other = await createAccount(t.services, 'pro');
    });
    after(() => t.close());

    const getJob = (id: string, account: TestAccount = pro) => async () => (await t.app.inject({ url: `/api/v1/jobs/${id}`, headers: account.headers })).json();
    const used = async (account: TestAccount) => (await t.app.inject({ url: '/api/v1/usage', headers: account.headers })).json().usage.used_this_month as number;
    const secretOf = async (account: TestAccount) => (await t.app.inject({ url: '/api/v1/webhooks/secret', headers: account.headers })).json().secret as string;
    const verified = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
      verifyWebhook(secret, String(r.headers['webhook-id']), String(r.headers['webhook-timestamp']), r.body, String(r.headers['webhook-signature']));

    it('async compile: 202, the stored CompileSuccess, a signed compile.succeeded webhook; other accounts get 404', async () => {
      const receiver = await startReceiver();
      try {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: true, callback_url: receiver.url } });
        assert.equal(res.statusCode, 202);
        const accepted = res.json();
        assert.deepEqual(Object.keys(accepted).sort(), ['job_id', 'status', 'status_url']);
        assert.equal(accepted.status_url, `http://quire.test/api/v1/jobs/${accepted.job_id}`);
        assert.equal(res.headers.location, accepted.status_url);

        const job = await waitForJob(getJob(accepted.job_id), (j) => (j.webhook as { state: string } | undefined)?.state === 'delivered');
        assert.equal(job.status, 'succeeded');
        assert.equal(job.http_status, 200);
        const result = job.result as Record<string, unknown>;
        assert.equal(result.pages, 1);
        assert.match(String(result.pdf_url), /^http:\/\/quire\.test\/api\/v1\/pdfs\//);
        assert.equal(job.error, undefined);
        const pdf = await t.app.inject({ url: String(result.pdf_url).replace('http://quire.test', '') });
        assert.equal(pdf.statusCode, 200);
        assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');

        const [delivery] = await receiver.waitFor(1);
        const payload = JSON.parse(delivery!.body);
        assert.deepEqual(payload, { type: 'compile.succeeded', job_id: accepted.job_id, data: result });
        assert.equal(delivery!.headers['webhook-id'], `msg_${accepted.job_id}`);
        assert.match(String(delivery!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
        const secret = await secretOf(pro);
        assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        assert.equal(verified(secret, delivery!), true);
        assert.equal(verified(await secretOf(other), delivery!), false);
        const attempts = (job.webhook as { attempts: Array<Record<string, unknown>> }).attempts;
        assert.equal(attempts.length, 1);
        assert.equal(attempts[0]!.outcome, 'delivered');
        assert.equal(attempts[0]!.status, 200);

        const foreign = await t.app.inject({ url: `/api/v1/jobs/${accepted.job_id}`, headers: other.headers });
        assert.equal(foreign.statusCode, 404);
        assert.equal(foreign.json().error, 'job_not_found');
        assert.equal((await t.app.inject({ url: `/api/v1/jobs/${accepted.job_id}` })).statusCode, 401);
      } finally {
        await receiver.close();
      }
    });

    it('refusals come at once, not as a job: anonymous, bad callback URLs, not LaTeX, plan, quota, bad async', async () => {
      const anon = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO, async: true } });
      assert.equal(anon.statusCode, 422);
      assert.equal(anon.json().error, 'async_not_available_anonymously');
      for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pw@example.com/', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://169.254.169.254/latest']) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: true, callback_url: url } });
        if (url.includes('127.0.0.1') || url.includes('10.1.2.3') || url.includes('::1') || url.includes('169.254')) {
          // QUIRE_WEBHOOK_ALLOW_PRIVATE=1 in this suite: literal private addresses pass here (see ssrf.test.ts).
          assert.equal(res.statusCode, 202, url);
          await waitForJob(getJob(res.json().job_id));
          continue;
        }
        assert.equal(res.statusCode, 422, url);
        assert.equal(res.json().error, 'invalid_callback_url', url);
      }
      const prose = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: 'just prose', async: true } });
      assert.equal(prose.statusCode, 422);
      assert.equal(prose.json().error, 'not_latex_source');
      const lua = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: (await createAccount(t.services, 'free')).headers, payload: { latex: HELLO, compiler: 'lualatex', async: true } });
      assert.equal(lua.statusCode, 403);
      assert.equal(lua.json().error, 'compiler_not_available');
      // Quota: a Free account with its 50 compiles used gets the synchronous 429 now, not a job.
      const spent = await createAccount(t.services, 'free');
      const monthKey = monthlyCompilesKey(spent.id, new Date());
      for (let i = 0; i < 50; i++) {
        await t.services.counters.tryReserve(monthKey, 50, new Date(Date.now() + 40 * 86400_000));
        await t.services.counters.commit(monthKey);
      }
      const exhausted = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: spent.headers, payload: { latex: HELLO, async: true } });
      assert.equal(exhausted.statusCode, 429);
      assert.equal(exhausted.json().error, 'rate_limit');
      const jobsOfSpent = await t.services.db.kysely.selectFrom('jobs').select('id').where('account_id', '=', spent.id).execute();
      assert.equal(jobsOfSpent.length, 0);
      const bad = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: 'yes' } });
      assert.equal(bad.statusCode, 422);
      assert.equal(bad.json().error, 'validation_failed');
      const orphan = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, callback_url: 'https://example.com/' } });
      assert.equal(orphan.statusCode, 422);
      assert.equal(orphan.json().fields[0].field, 'callback_url');
    });

    it('a failing compile is a failed job whose error is the synchronous 422 body, sent as compile.failed', async () => {
      const receiver = await startReceiver();
      try {
        const before = await used(pro);
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/compile',
          headers: pro.headers,
          payload: { latex: '\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}', async: true, callback_url: receiver.url },
        });
        assert.equal(res.statusCode, 202);
        const job = await waitForJob(getJob(res.json().job_id), (j) => (j.webhook as { state: string } | undefined)?.state === 'delivered');
        assert.equal(job.status, 'failed');
        assert.equal(job.http_status, 422);
        const error = job.error as Record<string, unknown>;
        assert.equal(error.error, 'compilation_failed');
        assert.equal(typeof error.log, 'string');
        const payload = JSON.parse(receiver.received[0]!.body);
        assert.equal(payload.type, 'compile.failed');
        assert.deepEqual(payload.data, error);
        assert.equal(await used(pro), before, 'a failed compile costs nothing, async or not');
      } finally {
        await receiver.close();
      }
    });

    it('retries after a 500 and after a timeout, every attempt recorded; one charge while client and deliveries retry', async () => {
      // Attempt 0: 500; attempt 1: hangs past the 1 s timeout; attempt 2: 200.
      const receiver = await startReceiver((n) => (n === 0 ? { status: 500 } : n === 1 ? { status: 200, hangMs: 2500 } : { status: 200 }));
      try {
        const before = await used(pro);
        const request = { method: 'POST' as const, url: '/api/v1/compile', headers: { ...pro.headers, 'idempotency-key': `retry-${db}` }, payload: { latex: HELLO, async: true, callback_url: receiver.url } };
        const first = await t.app.inject(request);
        assert.equal(first.statusCode, 202);
        const jobId = first.json().job_id;
        const again = await t.app.inject(request);
        assert.equal(again.statusCode, 202);
        assert.equal(again.json().job_id, jobId);
        assert.equal(again.headers['idempotent-replayed'], 'true');

        const job = await waitForJob(getJob(jobId), (j) => (j.webhook as { state: string } | undefined)?.state === 'delivered', 20_000);
        const attempts = (job.webhook as { attempts: Array<Record<string, unknown>> }).attempts;
        assert.deepEqual(
          attempts.map((a) => [a.attempt, a.outcome, a.status ?? null]),
          [
            [1, 'retry', 500],
            [2, 'retry', null],
            [3, 'delivered', 200],
          ],
        );
        assert.match(String(attempts[1]!.error), /no answer within 1000 ms/);
        const third = await t.app.inject(request);
        assert.equal(third.json().job_id, jobId);
        const received = await receiver.waitFor(3);
        assert.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, 1, 'one message id across retries');
        const secret = await secretOf(pro);
        for (const r of received) assert.equal(verified(secret, r), true);
        assert.ok(received[2]!.at - received[1]!.at >= 190, 'backoff doubles: 100 ms then 200 ms');
        assert.equal(await used(pro), before + 1, 'exactly one charge');
      } finally {
        await receiver.close();
      }
    });

    it('after a rotation deliveries are signed with the new secret only', async () => {
      const receiver = await startReceiver();
      try {
        const old = await secretOf(pro);
        const rotated = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks/secret/rotate', headers: pro.headers });
        assert.equal(rotated.statusCode, 200);
        const fresh = rotated.json().secret as string;
        assert.notEqual(fresh, old);
        assert.equal(await secretOf(pro), fresh);
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: true, callback_url: receiver.url } });
        const [delivery] = await receiver.waitFor(1);
        assert.equal(JSON.parse(delivery!.body).job_id, res.json().job_id);
        assert.equal(verified(fresh, delivery!), true);
        assert.equal(verified(old, delivery!), false);
      } finally {
        await receiver.close();
      }
    });

    it('Idempotency-Key: replays the first response, 422 for another body, keys are per account', async () => {
      const key = `idem-${db}`;
      const before = await used(pro);
      const sync = { method: 'POST' as const, url: '/api/v1/compile', headers: { ...pro.headers, 'idempotency-key': key }, payload: { latex: HELLO } };
      const first = await t.app.inject(sync);
      assert.equal(first.statusCode, 200);
      const replay = await t.app.inject({ ...sync, payload: { latex: HELLO } });
      assert.equal(replay.statusCode, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.json(), first.json());
      assert.equal(await used(pro), before + 1);

      const reused = await t.app.inject({ ...sync, payload: { latex: HELLO + '%' } });
      assert.equal(reused.statusCode, 422);
      assert.equal(reused.json().error, 'idempotency_key_reused');
      const asyncReused = await t.app.inject({ ...sync, payload: { latex: HELLO, async: true } });
      assert.equal(asyncReused.json().error, 'idempotency_key_reused');

      const theirs = await t.app.inject({ ...sync, headers: { ...other.headers, 'idempotency-key': key } });
      assert.equal(theirs.statusCode, 200);
      assert.notEqual(theirs.json().job_id, first.json().job_id);
      assert.equal(theirs.headers['idempotent-replayed'], undefined);

      const tooLong = await t.app.inject({ ...sync, headers: { ...pro.headers, 'idempotency-key': 'x'.repeat(256) } });
      assert.equal(tooLong.statusCode, 422);
      assert.equal(tooLong.json().error, 'invalid_idempotency_key');
    });

    it('a concurrent duplicate while the first is in flight gets 409 and does not run twice', async () => {
      const before = await used(pro);
      const request = { method: 'POST' as const, url: '/api/v1/compile', headers: { ...pro.headers, 'idempotency-key': `race-${db}` }, payload: { latex: HELLO } };
      const [a, b] = await Promise.all([t.app.inject(request), t.app.inject(request)]);
      const statuses = [a.statusCode, b.statusCode].sort();
      assert.deepEqual(statuses, [200, 409]);
      const conflict = a.statusCode === 409 ? a : b;
      assert.equal(conflict.json().error, 'idempotency_key_in_progress');
      assert.equal(conflict.headers['retry-after'], '1');
      assert.equal(await used(pro), before + 1);
    });

    it('V2 render and public render accept async too', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v2/templates',
        headers: pro.headers,
        payload: { name: `async-${db}`, latex_with_placeholders: '\\documentclass{article}\\begin{document}Hello {{ name }}\\end{document}' },
      });
      assert.equal(created.statusCode, 201);
      const id = created.json().template.id;
      const render = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: { name: 'Ada' }, async: true } });
      assert.equal(render.statusCode, 202);
      const job = await waitForJob(getJob(render.json().job_id));
      assert.equal(job.kind, 'render');
      assert.equal(job.status, 'succeeded');
      assert.equal((job.result as { template: { id: number } }).template.id, id);
      const invalid = await t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: pro.headers, payload: { data: {}, async: true } });
      assert.equal(invalid.statusCode, 422);
      assert.equal(invalid.json().error, 'schema_validation_failed');

      const slug = (await t.app.inject({ url: '/api/v1/public_templates' })).json().templates[0].slug as string;
      const sample = (await t.app.inject({ url: `/api/v1/public_templates/${slug}` })).json().sample_data;
      const anon = await t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, payload: { data: sample, async: true } });
      assert.equal(anon.statusCode, 422);
      assert.equal(anon.json().error, 'async_not_available_anonymously');
      const pub = await t.app.inject({ method: 'POST', url: `/api/v1/public_templates/${slug}/render`, headers: pro.headers, payload: { data: sample, async: true } });
      assert.equal(pub.statusCode, 202);
      const pubJob = await waitForJob(getJob(pub.json().job_id));
      assert.equal(pubJob.status, 'succeeded', JSON.stringify(pubJob.error));
      assert.equal((pubJob.result as { template: { slug: string } }).template.slug, slug);
    });
  });
}

describe('restart', () => {
  it('a job left running by a stopped process becomes failed with job_interrupted; a pending delivery resumes', async () => {
    const receiver = await startReceiver();
    const first = await testServices({ env: ENV });
    const env = { ...ENV, QUIRE_DATA_DIR: first.dataDir, QUIRE_DATABASE_URL: `sqlite://${first.dataDir}/quire.db` };
    let second: Awaited<ReturnType<typeof testServices>> | undefined;
    try {
      const account = await createAccount(first, 'pro');
      await first.asyncJobs.store.create({ id: '00000000-0000-4000-8000-000000000001', accountId: account.id, kind: 'compile', status: 'running', callbackUrl: receiver.url });
      // A finished job whose delivery is scheduled but not yet sent when the process stops.
      await first.asyncJobs.store.create({ id: '00000000-0000-4000-8000-000000000002', accountId: account.id, kind: 'compile', status: 'running', callbackUrl: receiver.url });
      await first.asyncJobs.deliveries.close();
      // The process "died" a minute ago: its last heartbeat is that old.
      await first.db.kysely.updateTable('jobs').set({ heartbeat_at: new Date(Date.now() - 60_000).toISOString() }).execute();
      assert.equal(await first.asyncJobs.store.finish('00000000-0000-4000-8000-000000000002', 200, { pages: 1 }), true);
      await first.close();
      assert.equal(receiver.received.length, 0);
      second = await testServices({ env });
      const deliveries = await receiver.waitFor(2);
      const byJob = new Map(deliveries.map((d) => [JSON.parse(d.body).job_id as string, d]));
      assert.deepEqual(JSON.parse(byJob.get('00000000-0000-4000-8000-000000000002')!.body), { type: 'compile.succeeded', job_id: '00000000-0000-4000-8000-000000000002', data: { pages: 1 } });
      const delivery = byJob.get('00000000-0000-4000-8000-000000000001');
      const payload = JSON.parse(delivery!.body);
      assert.equal(payload.type, 'compile.failed');
      assert.equal(payload.data.error, 'job_interrupted');
      assert.equal(payload.data.retryable, true);
      const view = await second.asyncJobs.get({ kind: 'account', account: { id: account.id } } as never, '00000000-0000-4000-8000-000000000001');
      assert.equal(view.status, 'failed');
      assert.equal(view.http_status, 503);

      // A live process's running job (fresh heartbeat) is left alone by another process opening the database.
      await second.asyncJobs.store.create({ id: '00000000-0000-4000-8000-000000000003', accountId: account.id, kind: 'compile', status: 'running', callbackUrl: null });
      const third = await testServices({ env });
      try {
        assert.equal((await third.asyncJobs.store.byId('00000000-0000-4000-8000-000000000003'))?.status, 'running');
      } finally {
        await third.cleanup();
      }
    } finally {
      await receiver.close();
      await second?.cleanup();
      await first.cleanup().catch(() => {});
    }
  });
});
