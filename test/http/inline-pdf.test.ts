// The inline-PDF extension of POST /api/v1/compile (src/http/inline-pdf.ts, docs/api.md): an
// Accept header preferring application/pdf gets the PDF itself with the success body in
// Quire-Result; everything else gets SPEC's JSON, exactly as before — no Accept, a wildcard, a
// tie, JSON preferred, a refusal, a 202, a success body too large for a header. Real TeX,
// real app.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asciiJson, MAX_RESULT_HEADER_BYTES, prefersPdf } from '../../src/http/inline-pdf.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

const PDF_FIRST = 'application/pdf, application/json;q=0.5';
/** 60 distinct undefined references with long labels: 50 warnings (the service's cap), a success body over 8 KiB. */
const MANY_WARNINGS = `\\documentclass{article}\n\\begin{document}\n${Array.from({ length: 60 }, (_, i) => `See \\ref{a-rather-long-label-name-that-makes-the-warning-longer-${i}}.`).join('\n')}\n\\end{document}\n`;

describe('POST /api/v1/compile with Accept: application/pdf (extension)', () => {
  let t: TestApp;
  let pro: TestAccount;
  before(async () => {
    t = await testApp();
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  const compile = (payload: unknown, accept?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/compile',
      headers: { ...pro.headers, 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) },
      payload: payload as object,
    });
  const download = async (pdfUrl: string) => {
    const url = new URL(pdfUrl);
    return t.app.inject({ method: 'GET', url: url.pathname + url.search });
  };

  test('the PDF itself, its success body in Quire-Result: the same bytes the signed pdf_url serves', async () => {
    const res = await compile({ latex: HELLO }, PDF_FIRST);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/pdf');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
    assert.equal(res.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-');
    const result = JSON.parse(String(res.headers['quire-result'])) as Record<string, unknown>;
    assert.equal(result.pages, 1);
    assert.equal(result.compiler, 'pdflatex');
    assert.match(String(result.job_id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(result.warnings, []);
    const stored = await download(String(result.pdf_url));
    assert.equal(stored.statusCode, 200);
    assert.ok(stored.rawPayload.equals(res.rawPayload), 'the answer and the stored PDF are the same bytes');
    // Charged once, like any delivered compile.
    assert.equal((result.usage as { used_this_month: number }).used_this_month, 1);
  });

  test("SPEC's JSON answer whenever application/pdf is not preferred: no Accept, */*, JSON, a tie, PDF ranked lower", async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/pdf, application/json', 'application/pdf, */*', 'application/pdf;q=0.4, application/json;q=0.9', 'application/*']) {
      const res = await compile({ latex: HELLO }, accept);
      assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^application\/json/, String(accept));
      assert.equal(res.headers['quire-result'], undefined, String(accept));
      const body = res.json<Record<string, unknown>>();
      assert.equal(body.pages, 1);
      assert.match(String(body.pdf_url), /\/api\/v1\/pdfs\//);
    }
  });

  test('refusals, failures and async acceptances stay JSON with their catalogue codes', async () => {
    const notLatex = await compile({ latex: 'just some text' }, 'application/pdf');
    assert.equal(notLatex.statusCode, 422);
    assert.equal(notLatex.json<{ error: string }>().error, 'not_latex_source');
    assert.equal(notLatex.headers['quire-result'], undefined);

    const broken = await compile({ latex: '\\documentclass{article}\n\\begin{document}\n\\undefinedthing\n\\end{document}\n' }, 'application/pdf');
    assert.equal(broken.statusCode, 422);
    assert.equal(broken.json<{ error: string }>().error, 'compilation_failed');

    const invalid = await compile({ latex: HELLO, compiler: 'troff' }, 'application/pdf');
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.json<{ error: string }>().error, 'validation_failed');

    const accepted = await compile({ latex: HELLO, async: true }, 'application/pdf');
    assert.equal(accepted.statusCode, 202);
    assert.match(String(accepted.headers['content-type']), /^application\/json/);
    const job = accepted.json<{ job_id: string; status_url: string }>();
    assert.match(job.job_id, /^[0-9a-f-]{36}$/);
    assert.equal(accepted.headers.location, job.status_url);
  });

  test('a success body too large for a header (50 warnings) is answered as JSON, its PDF behind pdf_url', async () => {
    const res = await compile({ latex: MANY_WARNINGS }, PDF_FIRST);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json<{ warnings: unknown[]; pdf_url: string }>();
    assert.equal(body.warnings.length, 50);
    assert.ok(asciiJson(body).length > MAX_RESULT_HEADER_BYTES, 'the premise: this body does not fit');
    const stored = await download(body.pdf_url);
    assert.equal(stored.statusCode, 200);
    assert.equal(stored.headers['content-type'], 'application/pdf');
  });
});

test('prefersPdf: application/pdf named, with a higher quality than JSON gets by name or wildcard', () => {
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, false],
    ['', false],
    ['application/pdf', true],
    ['APPLICATION/PDF', true],
    [PDF_FIRST, true],
    ['application/json;q=0.2, application/pdf;q=0.3', true],
    ['application/pdf, */*;q=0.1', true],
    ['application/pdf, application/json', false],
    ['application/pdf, */*', false],
    ['application/pdf, application/*', false],
    ['application/pdf;q=0', false],
    ['application/pdf;q=0.5, application/json', false],
    ['*/*', false],
    ['application/*', false],
    ['text/html', false],
  ];
  for (const [accept, expected] of cases) assert.equal(prefersPdf(accept), expected, String(accept));
});

test('asciiJson: the same JSON with non-ASCII escaped, so it is a valid header value', () => {
  const value = { message: 'Überfüllte Box — “quoted” 😀', n: 1 };
  const text = asciiJson(value);
  assert.match(text, /^[\x20-\x7e]*$/);
  assert.deepEqual(JSON.parse(text), value);
  assert.equal(text, '{"message":"\\u00dcberf\\u00fcllte Box \\u2014 \\u201cquoted\\u201d \\ud83d\\ude00","n":1}');
});
