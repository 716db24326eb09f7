// Tagged PDF through V2 templates and with attachments (issue 40), real TeX in the real sandbox:
// an image's alt text taken from the data (escaped for LaTeX like every value) reaches the
// figure's /Alt as the caller wrote it, read back with qpdf's JSON; and attachments with a
// tagged PDF: delivered where the standards allow embedded files, refused with a catalogue code
// where they do not.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { capturedLog } from '../security/attack.js';

const POSTER = String.raw`\documentclass{article}
\usepackage{graphicx}
\begin{document}
\section{ {{ heading }} }
\includegraphics[alt={ {{ logo_alt }} },width=3cm]{example-image}
\end{document}
`;

type Objects = Record<string, { value?: Record<string, unknown> }>;

interface Report {
  standards: string[];
  checks: Array<{ id: string; passed: boolean }>;
  violations: string[];
}

describe('tagged renders: alt text from data, attachments', () => {
  let t: TestApp;
  let pro: TestAccount;
  let dir: string;
  // The service's error lines, quoted when a compile is not delivered.
  const { log, lines } = capturedLog();
  const lastError = () => (lines.filter((l) => /"level":50/.test(l)).at(-1) ?? '').slice(0, 1500);

  before(async () => {
    t = await testApp({ log });
    pro = await createAccount(t.services, 'business');
    dir = mkdtempSync(join(tmpdir(), 'quire-render-tagged-'));
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'poster', latex_with_placeholders: POSTER } });
    assert.equal(created.statusCode, 201, created.body);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The delivered PDF's objects as qpdf's JSON has them, and its file. */
  const delivered = async (url: string): Promise<{ file: string; objects: Objects }> => {
    const res = await t.app.inject({ url: url.replace(/^https?:\/\/[^/]+/, '') });
    assert.equal(res.statusCode, 200);
    const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, res.rawPayload);
    const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8')) as { qpdf: [unknown, Objects] };
    return { file, objects: json.qpdf[1] };
  };
  /** Every /Alt of a structure element, as qpdf writes text strings (u:…). */
  const alts = (objects: Objects) => Object.values(objects).flatMap((o) => (typeof o.value?.['/Alt'] === 'string' ? [o.value['/Alt'] as string] : []));

  it("a V2 template's \\includegraphics[alt={{ logo_alt }}]: the data's text, LaTeX specials and all, is the figure's /Alt", async () => {
    // Every character templates/escape.ts rewrites: a command (\\textquotesingle{}), an escaped
    // special (\\&) or a zero kern between two hyphens.
    const alt = `Ada's logo of Müller & Söhne: 100% {blue} #1, $5 a_b ~ x^2 < y > z | "q" \\path \`t\` -- ,, end`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v2/templates/poster/render',
      headers: pro.headers,
      payload: { data: { heading: 'Our brand', logo_alt: alt }, output: { pdf_standard: 'ua-2', metadata: { lang: 'en-GB', title: 'Poster' } } },
    });
    assert.equal(res.statusCode, 200, `${res.body.slice(0, 3000)} ${lastError()}`);
    const report = res.json<{ conformance: Report }>().conformance;
    assert.deepEqual(report.violations, []);
    assert.equal(report.checks.find((c) => c.id === 'figures_alt')?.passed, true);
    const { objects } = await delivered(res.json().pdf_url);
    assert.deepEqual(alts(objects), [`u:${alt}`]);
  });

  const CSV = 'quarter,revenue\n2026-Q1,1000\n';
  const attachment = { 'data.csv': { content_base64: Buffer.from(CSV).toString('base64'), relationship: 'Data', mime_type: 'text/csv', description: 'The figures as CSV' } };
  const DOC = '\\documentclass{article}\n\\begin{document}\n\\section{Revenue}\nThe figures are attached.\n\\end{document}\n';
  const compile = (output: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', headers: pro.headers, payload: { latex: DOC, compiler: 'pdflatex', output } });
  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;

  for (const [standard, xmp] of [
    ['ua-2', [/<pdfuaid:part>2</]],
    [['a-4f', 'ua-2'], [/<pdfuaid:part>2</, /<pdfaid:part>4</, /<pdfaid:conformance>F</]],
    [['a-3b', 'ua-1'], [/<pdfuaid:part>1</, /<pdfaid:part>3</, /<pdfaid:conformance>B</]],
  ] as Array<[string | string[], RegExp[]]>) {
    it(`attachments with ${JSON.stringify(standard)}: embedded as an associated file, byte for byte, and every check passes`, async () => {
      const res = await compile({ pdf_standard: standard, metadata: { lang: 'en-GB', title: 'Revenue' }, attachments: attachment });
      assert.equal(res.statusCode, 200, `${res.body.slice(0, 3000)} ${lastError()}`);
      const report = res.json<{ conformance: Report }>().conformance;
      assert.deepEqual(report.standards, [standard].flat());
      assert.deepEqual(report.violations, []);
      const { file, objects } = await delivered(res.json().pdf_url);
      // On the tagged path the kernel's PDF management writes the file: its name-tree key is its
      // own (l3ef0001), the file's name is in /F and /UF, which readers show.
      const listing = execFileSync('qpdf', ['--list-attachments', '--verbose', file], { encoding: 'utf8' });
      const key = /^(\S+) -> \d+,\d+$/m.exec(listing)?.[1];
      assert.ok(key, listing);
      assert.match(listing, /preferred name: data\.csv\n/);
      assert.match(listing, /description: The figures as CSV\n/);
      assert.match(listing, /mime type: text\/csv\n/);
      assert.equal(execFileSync('qpdf', [`--show-attachment=${key}`, file]).toString('utf8'), CSV);
      const spec = Object.entries(objects).find(([, o]) => o.value?.['/UF'] === 'u:data.csv');
      assert.ok(spec, 'a file spec named data.csv');
      assert.equal(spec[1].value!['/AFRelationship'], '/Data');
      const catalog = Object.values(objects).find((o) => o.value?.['/Type'] === '/Catalog')!.value!;
      const af = typeof catalog['/AF'] === 'string' ? objects[`obj:${catalog['/AF']}`]?.value : catalog['/AF'];
      assert.ok(Array.isArray(af) && af.includes(spec[0].slice(4)), `the catalog /AF lists it: ${JSON.stringify(af)}`);
      const meta = execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' });
      for (const claim of xmp) assert.match(meta, claim);
    });
  }

  it('attachments with a PDF/A level that forbids embedded files, tagged or not: 422 validation_failed, nothing charged', async () => {
    const before = await used();
    for (const standard of [['a-2b', 'ua-1'], ['a-4', 'ua-2'], 'a-2b']) {
      const res = await compile({ pdf_standard: standard, metadata: { lang: 'en-GB', title: 'Revenue' }, attachments: attachment });
      assert.equal(res.statusCode, 422, JSON.stringify(standard));
      assert.equal(res.json().error, 'validation_failed');
      assert.deepEqual(res.json().fields.map((f: { field: string; rule: string }) => [f.field, f.rule]), [['output.attachments', 'conflict']], JSON.stringify(standard));
    }
    assert.equal(await used(), before);
  });
});

