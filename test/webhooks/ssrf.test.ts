// SSRF guard of webhook delivery, with the address rule ON (no QUIRE_WEBHOOK_ALLOW_PRIVATE):
// forbidden ranges, literal private addresses refused at request time, a name that resolves to
// loopback (the real `localhost`, and names resolved by an injected resolver) refused at
// delivery time with nothing sent, a redirect from an allowed receiver to a private address,
// and the connection pinned to the checked address. Real sockets on loopback throughout.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { after, before, describe, it } from 'node:test';
import { checkCallbackUrl, isForbiddenAddress } from '../../src/webhooks/address.js';
import { deliverOnce, type DeliveryOptions } from '../../src/webhooks/deliver.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob, startReceiver } from '../jobs/receiver.js';

describe('forbidden addresses', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, ULA and mapped addresses; allows public ones', () => {
    for (const address of [
      '127.0.0.1', '127.5.6.7', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '::1', '::', '::7f00:1', '2002:7f00:1::1', '2001:0:4136:e378::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', '::ffff:127.0.0.1', '::ffff:7f00:1',
      '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1', 'fd00:ec2::254', 'not-an-ip',
    ]) {
      assert.equal(isForbiddenAddress(address), true, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isForbiddenAddress(address), false, address);
    }
  });

  it('request time: https only (http when allowed), no credentials, no literal private address', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    const refused = (url: string, policy = strict) =>
      assert.throws(() => checkCallbackUrl(url, policy), (err: { code?: string }) => err.code === 'invalid_callback_url', url);
    refused('http://example.com/hook');
    refused('ftp://example.com/hook');
    refused('https://user:pass@example.com/hook');
    refused('//example.com');
    for (const host of ['127.0.0.1', '10.0.0.5', '[::1]', '[::ffff:127.0.0.1]', '169.254.169.254', '0x7f000001', '2130706433', '0177.0.0.1', '[fd00::1]']) {
      refused(`https://${host}/hook`);
    }
    assert.equal(checkCallbackUrl('https://example.com/hook', strict).host, 'example.com');
    assert.equal(checkCallbackUrl('http://example.com/hook', { allowHttp: true, allowPrivate: false }).protocol, 'http:');
    assert.equal(checkCallbackUrl('https://127.0.0.1/hook', { allowHttp: false, allowPrivate: true }).hostname, '127.0.0.1');
  });
});

describe('delivery-time checks on real sockets', () => {
  // 127.0.0.2 stands in for a public host: the injected rule exempts exactly that address.
  const PUBLIC_STAND_IN = '127.0.0.2';
  const options = (resolve: DeliveryOptions['resolve']): DeliveryOptions => ({
    policy: { allowHttp: true, allowPrivate: false },
    timeoutMs: 2000,
    maxRedirects: 3,
    resolve,
    isForbidden: (address) => address !== PUBLIC_STAND_IN && isForbiddenAddress(address),
  });

  it('a name resolving to a private address is refused and nothing is sent; the allowed name connects to the pinned address', async () => {
    const target = await startReceiver(() => ({ status: 200 }), '127.0.0.1');
    const allowed = await startReceiver(() => ({ status: 200 }), PUBLIC_STAND_IN);
    try {
      const resolve = async (host: string) => {
        if (host === 'evil.test') return [{ address: '127.0.0.1', family: 4 }];
        if (host === 'mixed.test') return [{ address: PUBLIC_STAND_IN, family: 4 }, { address: '10.0.0.1', family: 4 }];
        if (host === 'ok.test') return [{ address: PUBLIC_STAND_IN, family: 4 }];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      };
      const evil = await deliverOnce(`http://evil.test:${target.port}/hook`, '{}', {}, options(resolve));
      assert.equal(evil.outcome, 'final');
      assert.match((evil as { error: string }).error, /refused: evil\.test resolves to 127\.0\.0\.1/);
      const mixed = await deliverOnce(`http://mixed.test:${allowed.port}/hook`, '{}', {}, options(resolve));
      assert.equal(mixed.outcome, 'final', 'any forbidden address among the answers refuses the host');
      assert.equal(target.received.length + allowed.received.length, 0);

      // ok.test exists only in the injected resolver: a delivery proves the socket went to the checked address.
      const ok = await deliverOnce(`http://ok.test:${allowed.port}/hook`, '{"a":1}', { 'webhook-id': 'msg_1' }, options(resolve));
      assert.deepEqual(ok, { outcome: 'delivered', status: 200, url: `http://ok.test:${allowed.port}/hook` });
      assert.equal(allowed.received.length, 1);
      assert.equal(allowed.received[0]!.headers.host, `ok.test:${allowed.port}`);
      assert.equal(allowed.received[0]!.body, '{"a":1}');
    } finally {
      await target.close();
      await allowed.close();
    }
  });

  it('a redirect from an allowed receiver to a private address (literal or by name) is refused at that hop', async () => {
    const canary = `canary-${randomBytes(16).toString('hex')}`;
    const privateTarget = await startReceiver(() => ({ status: 200, body: canary }), '127.0.0.1');
    const redirects = [`http://127.0.0.1:${privateTarget.port}/steal`, `http://localhost:${privateTarget.port}/steal`, `http://[::ffff:127.0.0.1]:${privateTarget.port}/x`];
    const allowed = await startReceiver((n) => ({ status: 302, location: redirects[n] ?? '/' }), PUBLIC_STAND_IN);
    try {
      const resolve = async (host: string) =>
        host === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: PUBLIC_STAND_IN, family: 4 }];
      for (const redirect of redirects) {
        const result = await deliverOnce(`http://ok.test:${allowed.port}/hook`, '{}', {}, options(resolve));
        assert.equal(result.outcome, 'final', redirect);
        assert.ok(!JSON.stringify(result).includes(canary));
        assert.equal(result.url, redirect.replace('[::ffff:127.0.0.1]', '[::ffff:7f00:1]'));
      }
      assert.equal(allowed.received.length, 3);
      assert.equal(privateTarget.received.length, 0, 'nothing reached the private address');
    } finally {
      await privateTarget.close();
      await allowed.close();
    }
  });

  it('redirects are followed (re-checked each hop) up to the limit', async () => {
    const final = await startReceiver(() => ({ status: 204 }), PUBLIC_STAND_IN);
    const hop = await startReceiver(() => ({ status: 307, location: `http://ok.test:${final.port}/end` }), PUBLIC_STAND_IN);
    const loop = await startReceiver(() => ({ status: 302, location: '/again' }), PUBLIC_STAND_IN);
    try {
      const resolve = async () => [{ address: PUBLIC_STAND_IN, family: 4 }];
      const ok = await deliverOnce(`http://ok.test:${hop.port}/hook`, '{}', {}, options(resolve));
      assert.deepEqual(ok, { outcome: 'delivered', status: 204, url: `http://ok.test:${final.port}/end` });
      const looped = await deliverOnce(`http://ok.test:${loop.port}/hook`, '{}', {}, options(resolve));
      assert.equal(looped.outcome, 'final');
      assert.match((looped as { error: string }).error, /more than 3 redirects/);
      assert.equal(loop.received.length, 4);
    } finally {
      await final.close();
      await hop.close();
      await loop.close();
    }
  });
});

describe('SSRF through the API (address rule on, http allowed)', () => {
  let t: TestApp;
  let pro: TestAccount;
  const logs: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    t = await testApp({ env: { QUIRE_WEBHOOK_ALLOW_HTTP: '1' }, log: pino({ level: 'info' }, sink) });
    t.services.asyncJobs.deliveries.timings = { timeoutMs: 1000, baseDelayMs: 50, maxAttempts: 3, maxRedirects: 3, pollMs: 200 };
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  it('422 invalid_callback_url for a literal private address; a job whose callback host resolves to loopback never sends it', async () => {
    // The "internal service" holds a canary: it must never be contacted, nor its answer surface anywhere.
    const canary = `canary-${randomBytes(16).toString('hex')}`;
    const receiver = await startReceiver(() => ({ status: 200, body: canary }));
    try {
      for (const host of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '[::1]', '192.168.0.10']) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: true, callback_url: `http://${host}:${receiver.port}/hook` } });
        assert.equal(res.statusCode, 422, host);
        assert.equal(res.json().error, 'invalid_callback_url');
        assert.equal(res.json().callback_url, `http://${host}:${receiver.port}/hook`);
      }
      // `localhost` passes the request-time check (it is a name) and is refused once resolved.
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: HELLO, async: true, callback_url: `http://localhost:${receiver.port}/hook` } });
      assert.equal(res.statusCode, 202);
      const job = await waitForJob(
        async () => (await t.app.inject({ url: `/api/v1/jobs/${res.json().job_id}`, headers: pro.headers })).json(),
        (j) => ['delivered', 'failed'].includes((j.webhook as { state: string } | undefined)?.state ?? ''),
      );
      assert.equal(job.status, 'succeeded');
      const webhook = job.webhook as { state: string; attempts: Array<{ outcome: string; error: string }> };
      assert.equal(webhook.state, 'failed');
      assert.equal(webhook.attempts.length, 1, 'a refused address is final, not retried');
      assert.match(webhook.attempts[0]!.error, /refused: localhost resolves to (127\.0\.0\.1|::1)/);
      assert.equal(receiver.received.length, 0);
      assert.ok(!JSON.stringify(job).includes(canary));
      const attemptLog = logs.find((line) => line.includes('"msg":"webhook attempt"'));
      assert.ok(attemptLog, 'every attempt is logged');
      assert.match(attemptLog, /"outcome":"final"/);
      assert.match(attemptLog, /refused: localhost resolves to/);
      assert.ok(!logs.join('').includes(canary));
    } finally {
      await receiver.close();
    }
  });
});
