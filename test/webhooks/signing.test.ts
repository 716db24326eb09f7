// Webhook signatures: the Standard Webhooks reference vector, verification (several signatures,
// tampering, another secret), secret format, and the Python receiver printed in
// docs/async-and-webhooks.md and its Node receiver run for real against signed messages.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { newWebhookSecret, signWebhook, verifyWebhook } from '../../src/webhooks/signing.js';

describe('webhook signing', () => {
  it('matches the Standard Webhooks reference vector', () => {
    assert.equal(
      signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies its own signatures and nothing else', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"type":"compile.succeeded","job_id":"j","data":{}}';
    const sig = signWebhook(secret, 'msg_j', 1700000000, body);
    assert.equal(verifyWebhook(secret, 'msg_j', '1700000000', body, sig), true);
    assert.equal(verifyWebhook(secret, 'msg_j', '1700000000', body, `v1,AAAA ${sig}`), true, 'any of several signatures');
    assert.equal(verifyWebhook(secret, 'msg_j', '1700000000', body.replace('succeeded', 'failed'), sig), false);
    assert.equal(verifyWebhook(secret, 'msg_j', '1700000001', body, sig), false);
    assert.equal(verifyWebhook(newWebhookSecret(), 'msg_j', '1700000000', body, sig), false);
  });

  it('the Python receiver in the docs accepts a real signature and refuses a tampered body', () => {
    const docs = readFileSync(fileURLToPath(new URL('../../docs/async-and-webhooks.md', import.meta.url)), 'utf8');
    const python = /```python\n([\s\S]*?)```/.exec(docs)![1]!;
    const secret = newWebhookSecret();
    const ts = Math.floor(Date.now() / 1000);
    const body = '{"type":"compile.succeeded","job_id":"j1","data":{"pages":1}}';
    const headers = { 'webhook-id': 'msg_j1', 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(secret, 'msg_j1', ts, body) };
    const script = `${python}\nimport json, sys\nh = json.loads(sys.argv[1])\nprint(verify(h, sys.argv[2].encode()), verify(h, sys.argv[2].replace("1", "2").encode()))\n`;
    const out = execFileSync('python3', ['-c', script, JSON.stringify(headers), body], { env: { ...process.env, QUIRE_WEBHOOK_SECRET: secret }, encoding: 'utf8' });
    assert.equal(out.trim(), 'True False');
  });

  it('the Node receiver in the docs answers 204 to a signed delivery and 401 to a tampered one', async () => {
    const docs = readFileSync(fileURLToPath(new URL('../../docs/async-and-webhooks.md', import.meta.url)), 'utf8');
    const js = /```js\n([\s\S]*?)```/.exec(docs)![1]!.replace('.listen(8000)', ".listen(0, '127.0.0.1', function () { console.log(this.address().port); })");
    const dir = mkdtempSync(join(tmpdir(), 'quire-receiver-'));
    writeFileSync(join(dir, 'receiver.mjs'), js);
    const secret = newWebhookSecret();
    const child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { ...process.env, QUIRE_WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<number>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
      const ts = Math.floor(Date.now() / 1000);
      const body = '{"type":"compile.succeeded","job_id":"j2","data":{}}';
      const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_j2', 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(secret, 'msg_j2', ts, body) };
      const ok = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body });
      assert.equal(ok.status, 204);
      const tampered = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body: body.replace('j2', 'j3') });
      assert.equal(tampered.status, 401);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
