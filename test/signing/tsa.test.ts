// The timestamp client under the webhooks' address policy, without TeX: a name that resolves to
// loopback is refused after DNS (no request sent), a literal private address before it, an
// authority that is down or answers 500 or garbage is timestamp_failed with `retryable` saying
// whether trying again may help; with the opt-in, the loopback authority's token is carried.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { decodeP12, openIdentity, type OpenedIdentity } from '../../src/signing/identity.js';
import { signPdf } from '../../src/signing/signer.js';
import { signatureOf } from './cms.js';
import { makeCa, makeLeaf, p12 } from './pki.js';
import { startTsa, type Tsa } from './tsa-server.js';

describe('timestamp authority client', () => {
  let tsa: Tsa;
  let signer: OpenedIdentity;
  let pdf: Buffer;
  const bad = createServer((req, res) => {
    req.resume();
    req.on('end', () => (req.url === '/500' ? res.writeHead(500).end('down') : res.writeHead(200).end('not a timestamp reply')));
  });
  let badPort = 0;

  before(async () => {
    const ca = makeCa();
    tsa = await startTsa(makeLeaf(ca, 'Unit TSA', 'valid', { tsa: true }), [ca]);
    signer = await openIdentity(decodeP12(p12(makeLeaf(ca, 'Unit Signer'), [ca], 'pw'), 'f'), 'pw', 'f', new Date());
    pdf = await readFile('test/fixtures/projects/real/elsarticle-num/grabs.pdf');
    await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
    badPort = (bad.address() as AddressInfo).port;
  });
  after(async () => {
    await tsa.close();
    await new Promise((resolve) => bad.close(resolve));
  });

  const sign = (url: string, allowPrivate: boolean) => signPdf(pdf, signer.signer, {}, { url, allowPrivate, timeoutMs: 3000 }, new Date());
  async function refusal(url: string, allowPrivate: boolean): Promise<{ code: string; reason: string; retryable: boolean }> {
    try {
      await sign(url, allowPrivate);
    } catch (err) {
      assert.ok(err instanceof ServiceError, String(err));
      return { code: err.code, reason: String(err.details.reason), retryable: Boolean(err.details.retryable) };
    }
    throw new Error(`${url} was not refused`);
  }

  test('loopback by name (after DNS) or by address is refused without the opt-in; nothing reaches the authority', async () => {
    const served = tsa.served;
    const port = new URL(tsa.url).port;
    for (const url of [`http://localhost:${port}/tsr`, tsa.url, `http://[::ffff:127.0.0.1]:${port}/tsr`, 'http://169.254.169.254/latest']) {
      const refused = await refusal(url, false);
      assert.equal(refused.code, 'timestamp_failed', url);
      assert.match(refused.reason, /private, loopback, link-local or reserved address/, url);
      assert.equal(refused.retryable, false, url);
    }
    assert.equal(tsa.served, served);
  });

  test('an authority that is down, answers 500 or garbage is timestamp_failed', async () => {
    assert.deepEqual(await refusal(`http://127.0.0.1:${badPort}/500`, true), { code: 'timestamp_failed', reason: 'it answered HTTP 500', retryable: true });
    const garbage = await refusal(`http://127.0.0.1:${badPort}/x`, true);
    assert.equal(garbage.code, 'timestamp_failed');
    bad.closeAllConnections();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await refusal(`http://127.0.0.1:${port}/tsr`, true);
    assert.deepEqual([down.code, down.retryable], ['timestamp_failed', true]);
    assert.match(down.reason, /ECONNREFUSED/);
  });

  test('with the opt-in, the token of the loopback authority is in the signature', async () => {
    const signed = await sign(tsa.url, true);
    assert.ok(signatureOf(signed).timestampToken);
  });
});
