// Every string of `output` that reaches TeX (issue 37, item 4), through the real app with real
// TeX: the attachment descriptions of the issue ("a\b", "a # b") arrive in the PDF exactly as
// sent, and random strings full of TeX specials and control characters in every field
// (metadata with and without PDF/A, attachment names, MIME types and descriptions, watermark
// text) give a PDF or a catalogue 4xx, never a TeX error and never a 500.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const SPECIALS = ['\\', '{', '}', '$', '&', '#', '^', '^^', '^^M', '_', '~', '%', '<', '>', '|', '"', "'", '`', '[', ']', '=', ',', '@', '--', ' ', '  ', '\\par', '\\end{document}', '\\input{/etc/passwd}', '\\def', '\\csname', '##1', ')', '(', '\\\\'];
const CONTROLS = ['\n', '\r', '\t', '\u0000', '\u0001', '\u001b', '\u007f', '\u0085', '\u2028', '\uFEFF', '\uD800'];
const TEXT = ['a', 'Z', '7', 'é', 'ß', '€', '中', '😀', 'Ω'];

/** Strings of TeX specials and ordinary text, 1 to `max` pieces; with `dirty`, control characters and non-Latin-1 text too. */
const pieces = (max: number, dirty: boolean) =>
  fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...SPECIALS) },
        { weight: 3, arbitrary: fc.constantFrom(...TEXT.filter((c) => dirty || c <= '\u00ff')) },
        { weight: dirty ? 2 : 0, arbitrary: fc.constantFrom(...CONTROLS) },
      ),
      { minLength: 1, maxLength: max },
    )
    .map((parts) => parts.join(''));
/** Mostly strings TeX must survive, sometimes ones a field may refuse. */
const hostile = (max = 24) => fc.oneof({ weight: 5, arbitrary: pieces(max, false) }, { weight: 1, arbitrary: pieces(max, true) });

/** A 4xx the catalogue names for a bad value; anything else (a TeX error, a 500) fails. */
const BAD_VALUE = ['validation_failed', 'invalid_asset_filename'];

describe('output strings that reach TeX', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  const compile = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: payload as object, headers: pro.headers });
  const fetchPdf = async (url: string) => {
    const parsed = new URL(url);
    const res = await t.app.inject({ method: 'GET', url: parsed.pathname + parsed.search });
    assert.equal(res.statusCode, 200);
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    await writeFile(file, res.rawPayload);
    return file;
  };
  /** The /Desc of each embedded file, as qpdf reads it. */
  const descriptions = (file: string) => {
    const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>] };
    return Object.values(json.qpdf[1]).flatMap((o) => (o.value?.['/Type'] === '/Filespec' && typeof o.value['/Desc'] === 'string' ? [o.value['/Desc']] : []));
  };
  const text = (desc: string) => (desc.startsWith('u:') ? desc.slice(2) : Buffer.from(desc.slice(2), 'hex').subarray(2).swap16().toString('utf16le'));

  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
    dir = await mkdtemp(join(tmpdir(), 'quire-output-escape-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the descriptions that broke TeX arrive exactly as sent, with pdflatex, lualatex and PDF/A-3b (xelatex: a 422)', async () => {
    const sent = ['a\\b', 'a # b', '}{\\end{document}', '%#$&^_~ 100% \\\\ ^^M', 'Rechnung für März € 😀'];
    for (const [compiler, standard] of [['pdflatex', undefined], ['xelatex', undefined], ['lualatex', undefined], ['pdflatex', 'a-3b']] as const) {
      const attachments = Object.fromEntries(sent.map((description, i) => [`f${i}.txt`, { content_base64: Buffer.from(`file ${i}`).toString('base64'), mime_type: 'text/plain', description }]));
      const res = await compile({ latex: HELLO, compiler, output: { attachments, ...(standard ? { pdf_standard: standard } : {}) } });
      if (compiler === 'xelatex') {
        // embedfile does not support XeTeX: refused before TeX runs, never a TeX error.
        assert.equal(res.statusCode, 422, res.body.slice(0, 600));
        assert.deepEqual(res.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [['output.attachments', 'compiler']]);
        continue;
      }
      assert.equal(res.statusCode, 200, `${compiler} ${standard ?? ''}: ${res.body.slice(0, 1500)}`);
      const file = await fetchPdf(res.json().pdf_url);
      // The canary: each text is in the PDF byte for byte, so nothing of it was read as TeX.
      assert.deepEqual(descriptions(file).map(text).sort(), [...sent].sort(), compiler);
      assert.equal(execFileSync('qpdf', ['--show-attachment=f1.txt', file], { encoding: 'utf8' }), 'file 1');
    }
  });

  test('a lone UTF-16 surrogate in metadata or a description is a field error, never output_failed (found by the property below)', async () => {
    for (const [output, field] of [
      [{ metadata: { author: '  `\ud800[€' } }, 'output.metadata.author'],
      [{ metadata: { keywords: ['ok', 'b\udc00'] } }, 'output.metadata.keywords'],
      [{ attachments: { 'a.xml': { content_base64: 'PGEvPg==', description: 'x\ud83d' } } }, 'output.attachments.a.xml.description'],
    ] as const) {
      const res = await compile({ latex: HELLO, compiler: 'pdflatex', output });
      assert.equal(res.statusCode, 422, res.body.slice(0, 600));
      assert.deepEqual(res.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [[field, 'unicode']]);
    }
    // A pair is a character: accepted.
    const paired = await compile({ latex: HELLO, compiler: 'pdflatex', output: { metadata: { author: 'Ada 😀' } } });
    assert.equal(paired.statusCode, 200, paired.body.slice(0, 600));
  });

  test('random hostile strings in every field of output: a PDF or a catalogue 4xx, never a TeX error or a 500', async () => {
    const seen = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          title: hostile(),
          author: hostile(),
          keyword: hostile(8),
          creator: hostile(),
          name: fc.oneof({ weight: 1, arbitrary: hostile(6).map((s) => `${s}.xml`) }, { weight: 6, arbitrary: fc.constantFrom('plain.xml', 'a_b-c.txt', '_-_.x1') }),
          mime: fc.oneof({ weight: 1, arbitrary: hostile(4).map((s) => `text/${s}`) }, { weight: 6, arbitrary: fc.constantFrom('text/xml', 'application/vnd.a+b-c.d') }),
          description: hostile(),
          watermark: hostile(),
          pdfa: fc.boolean(),
          compiler: fc.constantFrom('pdflatex', 'xelatex', 'lualatex'),
        }),
        async (v) => {
          const output = {
            metadata: { title: v.title, author: v.author, subject: v.description, keywords: [v.keyword, 'k'], creator: v.creator },
            attachments: { [v.name]: { content_base64: 'PGEvPg==', mime_type: v.mime, description: v.description } },
            ...(v.pdfa ? { pdf_standard: 'a-3b' } : { watermark: { text: v.watermark } }),
          };
          const res = await compile({ latex: HELLO, compiler: v.compiler, output });
          const body = res.json() as { error?: string; pdf_url?: string };
          if (res.statusCode === 200) {
            seen.ok++;
            const file = await fetchPdf(body.pdf_url!);
            assert.deepEqual(descriptions(file).map(text), [v.description], 'the description arrives as sent');
            return;
          }
          seen.refused++;
          assert.ok(res.statusCode >= 400 && res.statusCode < 500 && BAD_VALUE.includes(body.error ?? ''), `${res.statusCode} ${JSON.stringify(v)}: ${res.body.slice(0, 1500)}`);
        },
      ),
      { numRuns: 40, seed: Number(process.env.QUIRE_FC_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
    );
    // Both outcomes were met: the property was not satisfied by refusing everything.
    assert.ok(seen.ok > 0 && seen.refused > 0, JSON.stringify(seen));
  });
});
