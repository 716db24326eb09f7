// Hostile input on the output step (issue 37, items 2, 3 and 5), through the real app with real
// TeX and qpdf: passwords shaped like qpdf options open the PDF and appear in no response, log
// line, job record, replay or database file; a stamp or an attached PDF carrying a Launch
// action, JavaScript or a javascript: URI is refused with pdf_active_content; an attachment
// never collides with a caller's file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { zipSync, strToU8 } from 'fflate';
import { waitForJob } from '../jobs/receiver.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { capturedLog } from './attack.js';
import { pdfFromObjects } from '../../src/tex/output/pdf-objects.js';

const TWO_PAGES = '\\documentclass{article}\n\\begin{document}\nFirst page.\\newpage Second page.\n\\end{document}\n';

/** A one-page PDF whose page, catalog and extra objects (from 5 on) carry what a test asks. */
function pdfWith(page = '', catalog = '', extra: string[] = []): Buffer {
  const content = 'BT /F1 12 Tf 10 10 Td ET\n';
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R ${catalog} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R ${page} >>`,
    `<< /Length ${content.length} >>\nstream\n${content}endstream`,
    ...extra,
  ];
  return pdfFromObjects(objects);
}

/** A PDF whose page has a link annotation running `action`. */
const linkPdf = (action: string) => pdfWith('/Annots [5 0 R]', '', [`<< /Type /Annot /Subtype /Link /Rect [0 0 100 100] /A ${action} >>`]);

const ACTIONS: Array<[string, string, RegExp]> = [
  ['Launch', '<< /S /Launch /F (calc.exe) >>', /Launch action \(\/S \/Launch\)/],
  ['JavaScript', '<< /S /JavaScript /JS (app.alert(1)) >>', /JavaScript/],
  ['javascript: URI', '<< /S /URI /URI (javascript:alert(1)) >>', /script URI \("javascript:alert\(1\)"\)/],
];

/** A NUL-free password of exactly 127 UTF-8 bytes: random characters of 1 to 3 bytes, control characters included. */
function randomPassword(): string {
  let password = '';
  while (Buffer.byteLength(password) < 127) {
    const left = 127 - Buffer.byteLength(password);
    const ranges: Array<[number, number]> = [[0x01, 0x7f], [0x80, 0x7ff], [0x800, 0xd7ff]];
    const [lo, hi] = ranges[Math.min(left, 3) === 1 ? 0 : randomBytes(1)[0]! % Math.min(left, 3)]!;
    password += String.fromCodePoint(lo + (randomBytes(4).readUInt32BE() % (hi - lo + 1)));
  }
  return password;
}

describe('hostile output options', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const { log, lines } = capturedLog();
  const compile = (payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: payload as object, headers: { ...pro.headers, ...headers } });
  const fetchPdf = async (url: string) => {
    const parsed = new URL(url);
    const res = await t.app.inject({ method: 'GET', url: parsed.pathname + parsed.search });
    assert.equal(res.statusCode, 200);
    const file = join(dir, `${randomBytes(6).toString('hex')}.pdf`);
    await writeFile(file, res.rawPayload);
    return file;
  };
  const qpdf = (args: string[]) => execFileSync('qpdf', args, { encoding: 'utf8' });

  before(async () => {
    t = await testApp({ log });
    pro = await createAccount(t.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-output-hostile-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every file of the data dir (the SQLite database and its WAL, blobs, stored PDFs), as bytes. */
  async function stored(): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (const name of await readdir(t.services.dataDir, { recursive: true })) {
      const data = await readFile(join(t.services.dataDir, name)).catch(() => null);
      if (data) out.push(data);
    }
    return out;
  }

  test('passwords shaped like qpdf options open the PDF and appear in no response, log, job record, replay or database file', async () => {
    const tag = () => randomBytes(6).toString('hex');
    const pairs: Array<[string, string]> = [
      ['-', '--'],
      [`--bits=40 ${tag()}`, `--allow-weak-crypto${tag()}`],
      [`@${tag()}.args`, `-x${tag()}`],
      [`line one\nline ${tag()}`, `\r\n--\n${tag()}`],
      [randomPassword(), randomPassword()],
      ['', `--${tag()}`],
    ];
    // The canary: a unique label the document prints as an undefined reference, which the
    // response, the job record and the replay all carry (their warnings): the greps below
    // would see a password that went the same way.
    const canary = `canary${tag()}`;
    const latex = `\\documentclass{article}\n\\begin{document}\nPay \\ref{${canary}}.\\newpage Two.\n\\end{document}\n`;
    const bodies: string[] = [];
    for (const [i, [user, owner]] of pairs.entries()) {
      const output = {
        metadata: { title: 'Payslip' },
        watermark: { text: 'CONFIDENTIAL' },
        compress: i % 2 === 0,
        linearize: i % 2 === 1,
        encrypt: { user_password: user, owner_password: owner, permissions: { print: false } },
      };
      const key = `hostile-${tag()}`;
      const res = await compile({ latex, output }, { 'idempotency-key': key });
      assert.equal(res.statusCode, 200, res.body.slice(0, 800));
      bodies.push(res.body);
      const replay = await compile({ latex, output }, { 'idempotency-key': key });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      bodies.push(replay.body);
      const file = await fetchPdf(res.json().pdf_url);
      for (const [password, who] of [[user, 'user'], [owner, 'owner']] as const) {
        if (password === '' && who === 'user') continue;
        const shown = qpdf([`--password=${password}`, '--show-encryption', file]);
        assert.match(shown, /^R = 6$/m, `AES-256 whatever the password (${JSON.stringify(password)})`);
        assert.match(shown, new RegExp(`Supplied password is ${who} password`), JSON.stringify(password));
        assert.match(shown, /print high resolution: not allowed/);
      }
      if (user !== '') assert.throws(() => qpdf(['--password=wrong', '--check', file]), 'another password does not open it');
      // The same request as an async job: its record (GET /api/v1/jobs/{id}) is the synchronous body.
      const accepted = await compile({ latex, output, async: true });
      assert.equal(accepted.statusCode, 202, accepted.body);
      const job = await waitForJob(async () => (await t.app.inject({ url: `/api/v1/jobs/${accepted.json().job_id}`, headers: pro.headers })).json(), undefined, 120_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job).slice(0, 800));
      bodies.push(JSON.stringify(job));
    }
    // A refusal and a TeX failure with passwords: no password in their bodies either.
    const secret = `--bits=40 ${tag()}`;
    const failed = await compile({ latex: '\\documentclass{article}\\begin{document}\\undefinedcommand\\end{document}', output: { encrypt: { user_password: secret, owner_password: secret } } });
    assert.equal(failed.statusCode, 422);
    bodies.push(failed.body);
    const nul = await compile({ latex: HELLO, output: { encrypt: { user_password: `${secret}\u0000`, owner_password: 'o' } } });
    assert.equal(nul.statusCode, 422);
    assert.deepEqual(nul.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [['output.encrypt.user_password', 'no_nul']]);
    bodies.push(nul.body);

    const jobIds = bodies.map((body) => /"job_id":"([^"]+)"|"id":"([^"]+)"/.exec(body)).filter(Boolean);
    const files = await stored();
    const seen = (text: string) => ({
      body: bodies.some((body) => body.includes(text)),
      log: lines.some((line) => line.includes(text)),
      stored: files.some((data) => data.includes(text)),
    });
    const { body, stored: inDb } = seen(canary);
    assert.deepEqual({ body, inDb }, { body: true, inDb: true }, 'the canary is in the bodies and the database: the greps look where a password would be');
    assert.ok(lines.some((line) => jobIds.some((id) => line.includes(id![1] ?? id![2]!))), 'the log was captured (it names the jobs)');
    const secrets = [...pairs.flat().filter((p) => p.length > 2), secret];
    for (const password of secrets) {
      // As sent, and as JSON would spell it (a newline as \n).
      for (const spelling of new Set([password, JSON.stringify(password).slice(1, -1)])) {
        assert.deepEqual(seen(spelling), { body: false, log: false, stored: false }, `password ${JSON.stringify(password)} leaked`);
      }
    }
  });

  test('a stamp whose page carries a Launch action, JavaScript or a javascript: URI is refused, over or under, with every other step', async () => {
    for (const [name, action, found] of ACTIONS) {
      const stamp = linkPdf(action).toString('base64');
      const variants = [
        { watermark: { asset: 'stamp.pdf' } },
        { watermark: { asset: 'stamp.pdf', underlay: true, pages: [2] }, page_images: { pages: [1], dpi: 72 }, compress: true, linearize: true },
        { watermark: { asset: 'stamp.pdf' }, encrypt: { owner_password: 'o' }, metadata: { title: 'T' } },
      ];
      for (const output of variants) {
        const res = await compile({ latex: TWO_PAGES, assets: { 'stamp.pdf': stamp }, output });
        assert.equal(res.statusCode, 422, `${name}: ${res.body.slice(0, 600)}`);
        assert.equal(res.json().error, 'pdf_active_content');
        assert.match(res.json().found, found);
        assert.match(res.json().found, /in the stamped PDF/);
        assert.equal(res.json().pdf_url, undefined);
      }
    }
    // From the asset library too.
    const upload = await t.app.inject({
      method: 'POST', url: '/api/v1/assets', headers: pro.headers,
      payload: { name: 'letterhead.pdf', content_base64: linkPdf(ACTIONS[0]![1]).toString('base64') },
    });
    assert.ok(upload.statusCode < 300, upload.body);
    const library = await compile({ latex: HELLO, use_stored_assets: ['letterhead.pdf'], output: { watermark: { asset: 'letterhead.pdf', underlay: true } } });
    assert.equal(library.statusCode, 422, library.body.slice(0, 600));
    assert.equal(library.json().error, 'pdf_active_content');

    // Canary: the same stamp with an ordinary link is delivered, its link annotation copied
    // onto the page (so a Launch link would have been delivered too).
    const plain = await compile({ latex: HELLO, assets: { 'stamp.pdf': linkPdf('<< /S /URI /URI (https://example.com/) >>').toString('base64') }, output: { watermark: { asset: 'stamp.pdf' } } });
    assert.equal(plain.statusCode, 200, plain.body.slice(0, 600));
    const json = qpdf(['--json=2', '--json-key=qpdf', await fetchPdf(plain.json().pdf_url)]);
    assert.match(json, /"\/URI": "u:https:\/\/example.com\/"/);
    // What a stamp's file holds beyond its first page's content and annotations is never
    // copied: a catalog or page-open script of the stamp is not in the delivered PDF.
    const scripted = pdfWith('/AA << /O << /S /JavaScript /JS (app.alert(2)) >> >>', '/OpenAction << /S /JavaScript /JS (app.alert(1)) >>');
    const stripped = await compile({ latex: HELLO, assets: { 'stamp.pdf': scripted.toString('base64') }, output: { watermark: { asset: 'stamp.pdf' } } });
    assert.equal(stripped.statusCode, 200, stripped.body.slice(0, 600));
    assert.doesNotMatch(qpdf(['--json=2', '--json-key=qpdf', await fetchPdf(stripped.json().pdf_url)]), /JavaScript|"\/JS"/i);
  });

  test('an attached PDF carrying active content is refused; other attachments and clean PDFs are delivered', async () => {
    for (const [name, action, found] of ACTIONS) {
      for (const pdf of [linkPdf(action), pdfWith('', `/OpenAction ${action}`)]) {
        // Whatever its name says, and after junk before the header (readers look in the first 1,024 bytes).
        for (const [file, data] of [['report.pdf', pdf], ['data.bin', Buffer.concat([Buffer.from('junk\n'), pdf])]] as const) {
          const res = await compile({ latex: HELLO, output: { attachments: { [file]: { content_base64: data.toString('base64') } }, compress: true } });
          assert.equal(res.statusCode, 422, `${name} in ${file}: ${res.body.slice(0, 600)}`);
          assert.equal(res.json().error, 'pdf_active_content');
          assert.match(res.json().found, found);
          assert.match(res.json().found, new RegExp(`in the attachment ${file.replace('.', '\\.')}`));
        }
      }
    }
    // Canary: a clean PDF attachment is delivered byte for byte (so an unscanned one would have been).
    const clean = linkPdf('<< /S /URI /URI (https://example.com/) >>');
    const res = await compile({ latex: HELLO, output: { attachments: { 'report.pdf': { content_base64: clean.toString('base64'), mime_type: 'application/pdf' } } } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 600));
    const file = await fetchPdf(res.json().pdf_url);
    assert.ok(execFileSync('qpdf', ['--show-attachment=report.pdf', file]).equals(clean));
  });

  test("an attachment never collides with a caller's file: files, project_zip and assets", async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\IfFileExists{quire-attachments/x.xml}{FOUND \\input{quire-attachments/x.xml}}{MISSING}\n\\end{document}\n';
    const attachments = { 'x.xml': { content_base64: Buffer.from('<attached/>').toString('base64'), mime_type: 'text/xml' } };
    for (const inputs of [
      { latex, files: { 'quire-attachments/x.xml': 'callerfile' } },
      { project_zip: Buffer.from(zipSync({ 'main.tex': strToU8(latex), 'quire-attachments/x.xml': strToU8('callerfile') })).toString('base64') },
    ]) {
      const res = await compile({ ...inputs, output: { attachments } });
      assert.equal(res.statusCode, 200, res.body.slice(0, 800));
      const file = await fetchPdf(res.json().pdf_url);
      assert.equal(execFileSync('qpdf', ['--show-attachment=x.xml', file], { encoding: 'utf8' }), '<attached/>');
      assert.match(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }), /FOUND callerfile/);
    }
    // The folder the attachments are written to is reserved for the job (tex/project/paths.ts):
    // refused in `files`, and dropped from a project_zip as a local build's leftover, so the
    // attachment delivered is always the caller's `output.attachments` entry.
    const before = (await t.services.db.kysely.selectFrom('pdfs').select('id').execute()).length;
    const refused = await compile({ latex: HELLO, files: { 'main.attachments/x.xml': 'planted' }, output: { attachments } });
    assert.equal(refused.statusCode, 422, refused.body.slice(0, 600));
    assert.equal(refused.json().error, 'invalid_asset_filename');
    assert.equal(refused.json().file, 'main.attachments/x.xml');
    assert.equal((await t.services.db.kysely.selectFrom('pdfs').select('id').execute()).length, before);
    const zipped = await compile({
      project_zip: Buffer.from(zipSync({ 'main.tex': strToU8(HELLO), 'main.attachments/x.xml': strToU8('planted') })).toString('base64'),
      output: { attachments },
    });
    assert.equal(zipped.statusCode, 200, zipped.body.slice(0, 600));
    const file = await fetchPdf(zipped.json().pdf_url);
    assert.equal(execFileSync('qpdf', ['--show-attachment=x.xml', file], { encoding: 'utf8' }), '<attached/>');
  });
});
