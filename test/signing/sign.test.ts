// output.sign end to end (issue 40): real TeX in the real sandbox, the real app, certificates
// made here with node-forge, verified with the TeX image's pdfsig and PDFBox Preflight and,
// for the RFC 3161 token (which pdfsig does not report: it prints /M as "Signing Time"; its
// -dump hands out the CMS that carries the token), `openssl ts -verify`. Every refusal is
// checked to cost nothing and store nothing; passwords are looked for everywhere they could go.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';
import { callTool } from '../mcp/call.js';
import { capturedLog } from '../security/attack.js';
import { signatureOf } from './cms.js';
import { pdfsig, pdfsigDump, preflight } from './image-run.js';
import { makeCa, makeLeaf, p12, type Pki } from './pki.js';
import { startTsa, type Tsa } from './tsa-server.js';

/** Every file of the data dir (the SQLite database and its WAL, stored PDFs) as bytes. */
async function storedFiles(dataDir: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const name of await readdir(dataDir, { recursive: true })) {
    const data = await readFile(join(dataDir, name)).catch(() => null);
    if (data) out.push(data);
  }
  return out;
}

const path = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};

describe('PAdES signatures (output.sign)', () => {
  let t: TestApp;
  let pro: TestAccount;
  let other: TestAccount;
  let free: TestAccount;
  let ca: Pki;
  let leaf: Pki;
  let tsa: Tsa;
  let tsaCert: Pki;
  let dir: string;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  let identity: string;
  const { log, lines } = capturedLog();
  const compile = (who: TestAccount, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: payload as object, headers: { ...who.headers, ...headers } });
  const used = async (who: TestAccount) => (await t.services.counters.get(monthlyCompilesKey(who.id, new Date()))).used;
  const pdfRows = async (who: TestAccount) => (await t.services.db.kysely.selectFrom('pdfs').select('id').where('account_id', '=', who.id).execute()).length;
  const fetchPdf = async (url: string) => {
    const res = await t.app.inject({ method: 'GET', url: path(url) });
    assert.equal(res.statusCode, 200);
    return res.rawPayload;
  };

  before(async () => {
    ca = makeCa();
    leaf = makeLeaf(ca, 'Jane Signer');
    tsaCert = makeLeaf(ca, 'Quire Test TSA', 'valid', { tsa: true });
    tsa = await startTsa(tsaCert, [ca]);
    t = await testApp({ log, env: { QUIRE_TSA_URL: tsa.url, QUIRE_TSA_ALLOW_PRIVATE: 'on' } });
    pro = await createAccount(t.services, 'pro');
    other = await createAccount(t.services, 'pro');
    free = await createAccount(t.services, 'free');
    identity = p12(leaf, [ca], password);
    dir = await mkdtemp(join(tmpdir(), 'quire-sign-'));
  });
  after(async () => {
    await t.close();
    await tsa.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a signed PDF verifies with pdfsig (ETSI.CAdES.detached, the subject), keeps the unsigned PDF as its prefix, and one changed byte breaks it', async () => {
    const latex = HELLO.replace('Hello', `Contract ${randomBytes(4).toString('hex')}`);
    const plain = await compile(pro, { latex });
    assert.equal(plain.statusCode, 200, plain.body.slice(0, 1000));
    const unsigned = await fetchPdf(plain.json().pdf_url);
    const res = await compile(pro, { latex, output: { sign: { p12_base64: identity, password, reason: 'Approved', location: 'Berlin', contact_info: 'legal@example.com' } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 1000));
    const signed = await fetchPdf(res.json().pdf_url);
    assert.ok(signed.subarray(0, unsigned.length).equals(unsigned), 'incremental update: the unsigned PDF is a byte prefix');
    const check = await pdfsig(signed);
    assert.match(check.output, /Signature Validation: Signature is Valid\./, check.output);
    assert.match(check.output, /Signature Type: ETSI\.CAdES\.detached/);
    assert.match(check.output, /Signer full Distinguished Name: C=DE,O=Quire Test,CN=Jane Signer/);
    assert.match(check.output, /Total document signed/);
    const parts = signatureOf(signed);
    assert.ok(parts.signedAttributes.includes('1.2.840.113549.1.9.16.2.47'), `signing-certificate-v2 among ${parts.signedAttributes.join(', ')}`);
    assert.equal(parts.timestampToken, undefined, 'B-B: no timestamp asked, none carried');
    const text = signed.toString('latin1');
    assert.match(text, /\/Reason\s*\(Approved\)/);
    assert.match(text, /\/Location\s*\(Berlin\)/);
    // One byte inside the first signed range (in the unsigned PDF's body) changed.
    const tampered = Buffer.from(signed);
    const at = Math.floor(unsigned.length / 2);
    tampered[at] = tampered[at]! ^ 0x01;
    const broken = await pdfsig(tampered);
    assert.doesNotMatch(broken.output, /Signature is Valid/, broken.output);
    assert.match(broken.output, /Signature Validation: (Digest Mismatch|Signature is Invalid)/, broken.output);
  });

  test('MCP: compile signs with output.sign as HTTP does; the identity tools list and delete; a signed result is never served to an unsigned request', async () => {
    const latex = HELLO.replace('Hello', `Mcp ${randomBytes(4).toString('hex')}`);
    const signedCall = await callTool(t.app, pro.headers, 'compile', { latex, output: { sign: { p12_base64: identity, password, reason: 'Agent' } } });
    assert.equal(signedCall.isError, undefined, JSON.stringify(signedCall.structuredContent).slice(0, 500));
    const signed = await fetchPdf(String(signedCall.structuredContent.pdf_url));
    assert.match((await pdfsig(signed)).output, /Signature is Valid/);
    // The same request without sign, after it: the cached TeX result, unsigned, and a byte prefix of the signed one.
    const plainCall = await callTool(t.app, pro.headers, 'compile', { latex });
    const plain = await fetchPdf(String(plainCall.structuredContent.pdf_url));
    assert.ok(plain.length < signed.length && signed.subarray(0, plain.length).equals(plain));
    assert.doesNotMatch(plain.toString('latin1'), /\/ByteRange/);
    const bad = await callTool(t.app, pro.headers, 'compile', { latex, output: { sign: { p12_base64: identity, password: 'wrong' } } });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error, 'pkcs12_password_incorrect');
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: pro.headers, payload: { name: 'agent', p12_base64: identity, password } })).statusCode, 201);
    const listed = await callTool(t.app, pro.headers, 'list_signing_identities');
    assert.deepEqual((listed.structuredContent.identities as Array<{ name: string }>).map((i) => i.name), ['agent']);
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(password));
    assert.equal((await callTool(t.app, free.headers, 'list_signing_identities')).structuredContent.error, 'plan_required');
    assert.equal((await callTool(t.app, other.headers, 'delete_signing_identity', { name: 'agent' })).structuredContent.error, 'signing_identity_not_found');
    assert.deepEqual((await callTool(t.app, pro.headers, 'delete_signing_identity', { name: 'agent' })).structuredContent, { deleted: true, name: 'agent' });
  });

  test("a document with its own form field named like the signature's, compressed into object streams, signs next to it", async () => {
    const latex = '\\documentclass{article}\n\\usepackage{hyperref}\n\\begin{document}\n\\begin{Form}\\TextField[name=Signature1,width=4cm]{Name}\\end{Form}\n\\end{document}\n';
    const res = await compile(pro, { latex, output: { compress: true, metadata: { title: 'Form' }, sign: { p12_base64: identity, password } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 1000));
    const signed = await fetchPdf(res.json().pdf_url);
    const check = await pdfsig(signed);
    assert.match(check.output, /Signature Field Name: Signature1_2/, check.output);
    assert.match(check.output, /Signature is Valid/);
    assert.match(signed.toString('latin1'), /\/Type\s*\/XRef/, 'object streams and an xref stream, as compress writes them');
  });

  test('a PDF/A-1b document signed still passes PDFBox Preflight', async () => {
    const res = await compile(pro, { latex: HELLO, output: { pdf_standard: 'a-1b', metadata: { title: 'Signed archive' }, sign: { p12_base64: identity, password, reason: 'Archived' } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
    const signed = await fetchPdf(res.json().pdf_url);
    const verdict = await preflight(signed);
    assert.match(verdict.output, /^VALID$/m, verdict.output);
    assert.equal(verdict.code, 0);
    assert.match((await pdfsig(signed)).output, /Signature is Valid/);
  });

  test('B-T: the signature carries an RFC 3161 token from the loopback TSA that openssl verifies over the signature value', async () => {
    const served = tsa.served;
    const res = await compile(pro, { latex: HELLO, output: { sign: { p12_base64: identity, password, timestamp: true } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 1000));
    assert.equal(tsa.served, served + 1);
    const signed = await fetchPdf(res.json().pdf_url);
    const report = (await pdfsig(signed)).output;
    assert.match(report, /Signature is Valid/);
    const parts = signatureOf(signed);
    assert.ok(parts.timestampToken, 'a timestamp token among the unsigned attributes');
    await writeFile(join(dir, 'token.der'), parts.timestampToken);
    await writeFile(join(dir, 'ca.pem'), ca.pem);
    await writeFile(join(dir, 'tsa.pem'), tsaCert.pem);
    const digest = createHash('sha256').update(parts.signatureValue).digest('hex');
    const verified = execFileSync('openssl', ['ts', '-verify', '-digest', digest, '-sha256', '-in', join(dir, 'token.der'), '-token_in', '-CAfile', join(dir, 'ca.pem'), '-untrusted', join(dir, 'tsa.pem')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.match(verified, /Verification: OK/);
    const shown = execFileSync('openssl', ['ts', '-reply', '-in', join(dir, 'token.der'), '-token_in', '-text'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const stamped = /Time stamp: (\w{3} +\d+ \d\d:\d\d:\d\d \d{4}) GMT/.exec(shown);
    assert.ok(stamped, shown);

    // What poppler shows of it: pdfsig prints no timestamp line (poppler reads /M as "Signing
    // Time"), but the CMS its -dump hands out, the one it validated, carries this very token,
    // and the time it prints agrees with the TSA's to within a minute.
    const dump = await pdfsigDump(signed);
    assert.equal(dump.signatures.length, 1, dump.output);
    assert.ok(dump.signatures[0]!.includes(parts.timestampToken), 'the CMS pdfsig dumps carries the token');
    assert.match(execFileSync('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER'], { input: dump.signatures[0], encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }), /id-smime-aa-timeStampToken/);
    const shownTime = /Signing Time: (\w{3} \d\d \d{4} \d\d:\d\d:\d\d)/.exec(report);
    assert.ok(shownTime, report);
    const skew = Math.abs(Date.parse(`${shownTime[1]} UTC`) - Date.parse(`${stamped[1]} UTC`));
    assert.ok(skew <= 60_000, `pdfsig's ${shownTime[1]} and the token's ${stamped[1]}`);
  });

  test('bad identities and conflicts are 4xx catalogue codes, cost nothing and store nothing', async () => {
    const expired = p12(makeLeaf(ca, 'Old Signer', 'expired'), [ca], 'x');
    const future = p12(makeLeaf(ca, 'Future Signer', 'future'), [ca], 'x');
    const keyless = p12(leaf, [ca], 'x', { withoutKey: true });
    const cases: Array<[string, object, number, string, Record<string, unknown>?]> = [
      ['wrong password', { p12_base64: identity, password: 'wrong' }, 422, 'pkcs12_password_incorrect', { field: 'output.sign.p12_base64' }],
      ['expired', { p12_base64: expired, password: 'x' }, 422, 'signing_certificate_not_valid', { reason: 'expired' }],
      ['not yet valid', { p12_base64: future, password: 'x' }, 422, 'signing_certificate_not_valid', { reason: 'not_yet_valid' }],
      ['no private key', { p12_base64: keyless, password: 'x' }, 422, 'invalid_pkcs12', { reason: 'no_private_key' }],
      ['not base64', { p12_base64: 'not base64!', password: 'x' }, 422, 'invalid_pkcs12', { reason: 'base64' }],
      ['not PKCS#12', { p12_base64: Buffer.from('%PDF-1.7 not a key').toString('base64'), password: 'x' }, 422, 'invalid_pkcs12', { reason: 'format' }],
      ['a DER that is no PFX', { p12_base64: Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]).toString('base64'), password: 'x' }, 422, 'invalid_pkcs12', { reason: 'format' }],
      ['oversized', { p12_base64: Buffer.alloc(40 * 1024, 0x30).toString('base64'), password: 'x' }, 422, 'validation_failed'],
      ['both sources', { p12_base64: identity, password, identity: 'main' }, 422, 'validation_failed'],
      ['no source', { reason: 'x' }, 422, 'validation_failed'],
      ['unknown field', { p12_base64: identity, password, level: 'B-LTA' }, 422, 'validation_failed'],
      ['unknown stored identity', { identity: 'nope' }, 404, 'signing_identity_not_found', { identity: 'nope' }],
    ];
    const before = { used: await used(pro), pdfs: await pdfRows(pro) };
    for (const [name, sign, status, code, fields] of cases) {
      const res = await compile(pro, { latex: HELLO, output: { sign } });
      assert.equal(res.statusCode, status, `${name}: ${res.body.slice(0, 500)}`);
      assert.equal(res.json().error, code, name);
      for (const [key, value] of Object.entries(fields ?? {})) assert.equal(res.json()[key], value, `${name}: ${key}`);
    }
    const conflicts = await compile(pro, { latex: HELLO, output: { encrypt: { owner_password: 'o' }, linearize: true, sign: { p12_base64: identity, password } } });
    assert.equal(conflicts.statusCode, 422);
    assert.deepEqual(conflicts.json().fields.map((f: { field: string; rule: string }) => f.rule), ['conflict', 'conflict']);
    assert.deepEqual({ used: await used(pro), pdfs: await pdfRows(pro) }, before);
  });

  test('the TSA is held to the webhook address policy: a loopback TSA without the opt-in is refused, nothing charged', async () => {
    const strict = await testApp({ env: { QUIRE_TSA_URL: tsa.url } });
    try {
      const who = await createAccount(strict.services, 'pro');
      const served = tsa.served;
      const res = await strict.app.inject({ method: 'POST', url: '/api/v1/compile', headers: who.headers, payload: { latex: HELLO, output: { sign: { p12_base64: identity, password, timestamp: true } } } });
      assert.equal(res.statusCode, 422, res.body.slice(0, 500));
      assert.equal(res.json().error, 'timestamp_failed');
      assert.match(res.json().reason, /private, loopback, link-local or reserved address/);
      assert.equal(tsa.served, served, 'no request reached the TSA');
      assert.equal((await strict.services.counters.get(monthlyCompilesKey(who.id, new Date()))).used, 0);
    } finally {
      await strict.close();
    }
    const none = await testApp();
    try {
      const who = await createAccount(none.services, 'pro');
      const res = await none.app.inject({ method: 'POST', url: '/api/v1/compile', headers: who.headers, payload: { latex: HELLO, output: { sign: { p12_base64: identity, password, timestamp: true } } } });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'timestamp_not_configured');
    } finally {
      await none.close();
    }
  });

  test('stored identities: paid plans only, listed without key or password, usable only by their account', async () => {
    const body = { name: 'Main-Signer', p12_base64: identity, password };
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: free.headers, payload: body });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error, 'plan_required');
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: pro.headers, payload: body });
    assert.equal(created.statusCode, 201, created.body);
    const info = created.json();
    assert.deepEqual(Object.keys(info).sort(), ['created_at', 'fingerprint_sha256', 'issuer', 'key_type', 'name', 'not_after', 'not_before', 'subject']);
    assert.equal(info.subject, 'CN=Jane Signer, O=Quire Test, C=DE');
    assert.equal(info.issuer, 'CN=Quire Test CA, O=Quire Test, C=DE');
    const der = Buffer.from(execFileSync('openssl', ['x509', '-outform', 'DER'], { input: leaf.pem }));
    assert.equal(info.fingerprint_sha256, createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':'));
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: pro.headers, payload: { ...body, name: 'main-signer' } });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error, 'signing_identity_exists');
    const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: pro.headers, payload: { ...body, name: 'other', password: 'nope' } });
    assert.equal(wrong.json().error, 'pkcs12_password_incorrect');
    assert.equal(wrong.json().field, 'p12_base64');

    const list = await t.app.inject({ url: '/api/v1/signing-identities', headers: pro.headers });
    assert.deepEqual(list.json(), { identities: [info] });
    assert.deepEqual((await t.app.inject({ url: '/api/v1/signing-identities', headers: other.headers })).json(), { identities: [] });

    const signed = await compile(pro, { latex: HELLO, output: { sign: { identity: 'main-signer', reason: 'Stored' } } });
    assert.equal(signed.statusCode, 200, signed.body.slice(0, 1000));
    const storedCheck = (await pdfsig(await fetchPdf(signed.json().pdf_url))).output;
    assert.match(storedCheck, /Signature is Valid/, storedCheck);
    assert.match(storedCheck, /CN=Jane Signer/);
    const before = await used(other);
    const stolen = await compile(other, { latex: HELLO, output: { sign: { identity: 'Main-Signer' } } });
    assert.equal(stolen.statusCode, 404);
    assert.equal(stolen.json().error, 'signing_identity_not_found');
    assert.equal(await used(other), before);
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/api/v1/signing-identities/Main-Signer', headers: other.headers })).statusCode, 404);
    const freeUse = await compile(free, { latex: HELLO, output: { sign: { identity: 'Main-Signer' } } });
    assert.equal(freeUse.json().error, 'plan_required');

    // The row holds the sealed identity, not the PKCS#12 or its password.
    const row = await t.services.db.kysely.selectFrom('signing_identities').selectAll().where('account_id', '=', pro.id).executeTakeFirstOrThrow();
    assert.ok(!row.sealed.includes(password) && !row.sealed.includes(identity.slice(0, 40)));
    const deleted = await t.app.inject({ method: 'DELETE', url: '/api/v1/signing-identities/MAIN-SIGNER', headers: pro.headers });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await compile(pro, { latex: HELLO, output: { sign: { identity: 'Main-Signer' } } })).json().error, 'signing_identity_not_found');
  });

  test('passwords and keys appear in no response, log line, job record, replay or stored file', async () => {
    const secret = `canary-${randomBytes(8).toString('hex')}`;
    const key = p12(leaf, [ca], secret);
    const marker = `marker${randomBytes(4).toString('hex')}`;
    const latex = `\\documentclass{article}\n\\begin{document}\nSee \\ref{${marker}}.\n\\end{document}\n`;
    const bodies: string[] = [];
    const sign = { p12_base64: key, password: secret, reason: 'Canary' };
    const idem = `sign-${randomBytes(4).toString('hex')}`;
    const first = await compile(pro, { latex, output: { sign } }, { 'idempotency-key': idem });
    assert.equal(first.statusCode, 200, first.body.slice(0, 500));
    const replay = await compile(pro, { latex, output: { sign } }, { 'idempotency-key': idem });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const accepted = await compile(pro, { latex, output: { sign }, async: true });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${accepted.json().job_id}`, headers: pro.headers })).json(), undefined, 120_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job).slice(0, 500));
    const wrong = await compile(pro, { latex, output: { sign: { ...sign, password: `${secret}x` } } });
    assert.equal(wrong.json().error, 'pkcs12_password_incorrect');
    const stored = await t.app.inject({ method: 'POST', url: '/api/v1/signing-identities', headers: pro.headers, payload: { name: 'canary', p12_base64: key, password: secret } });
    assert.equal(stored.statusCode, 201);
    const failed = await compile(pro, { latex: '\\documentclass{article}\\begin{document}\\undefinedcommand\\end{document}', output: { sign } });
    assert.equal(failed.statusCode, 422);
    bodies.push(first.body, replay.body, JSON.stringify(job), wrong.body, stored.body, failed.body);

    const files = await storedFiles(t.services.dataDir);
    const seen = (text: string) => ({
      body: bodies.some((body) => body.includes(text)),
      log: lines.some((line) => line.includes(text)),
      stored: files.some((data) => data.includes(text)),
    });
    assert.deepEqual(seen(marker), { body: true, log: false, stored: true }, 'the marker is in the bodies and the database: the greps look where a secret would be');
    assert.ok(lines.some((line) => line.includes('"msg":"compile"')) && lines.some((line) => line.includes('"msg":"pdf signed"')), 'the log was captured, signing included');
    assert.deepEqual(seen(secret), { body: false, log: false, stored: false }, 'the password leaked');
    assert.deepEqual(seen(key.slice(100, 160)), { body: false, log: false, stored: false }, 'the PKCS#12 leaked');
  });
});
