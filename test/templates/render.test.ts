// POST /api/v2/templates/{id}/render with real TeX: three kinds of document from their derived
// sample data, stored assets, compiler choice, every refusal code, quota and limits, and a
// property test that any string value prints literally without changing the document.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/clock.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const INVOICE = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage{graphicx}
\begin{document}
\includegraphics[width=1cm]{logo.png}

\textbf{Invoice {{ invoice_number }}} \hfill {{ issue_date | date: "%B %-d, %Y" }}

Bill to: {{ customer.name }}\\
{{ customer.address }}

\begin{tabular}{lrr}
Description & Qty & Amount\\
{% for item in items %}{{ item.description }} & {{ item.quantity }} & {{ item.unit_price | times: item.quantity | currency: currency }}\\
{% endfor %}
\end{tabular}

Total due: {{ total | currency: currency }}
{% if notes %}Notes: {{ notes }}{% endif %}
\end{document}
`;

const CERTIFICATE = String.raw`\documentclass{article}
\usepackage{fontspec}
\begin{document}
\begin{center}
{\Huge Certificate of Completion}\\[1em]
This certifies that\\[0.5em]
{\LARGE {{ recipient_name }}}\\[0.5em]
completed \textbf{{{ course.title }}} on {{ completion_date | date: "%d %B %Y" }}.
\end{center}
\end{document}
`;

const LETTER = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\newcommand\closing[1]{\par\medskip #1\par}
\def\signoff#1{%
  \par\bigskip #1}
\begin{document}
{{ sender.name }}\\
{{ sender.address }}

{{ date | date: "%B %-d, %Y" }}

Dear {{ recipient.name }},

{{ body }}

{% if postscript %}P.S. {{ postscript }}{% endif %}
\closing{Sincerely,}
\signoff{ {{- sender.name -}} }
\end{document}
`;

/** The PDF's text. `raw` keeps content-stream order and, unlike the default, never joins a
 * line that ends in "-" with the next one (which would drop the hyphen of a value like "x--"). */
function pdfText(pdf: Buffer, options: { raw?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'quire-render-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    return execFileSync('pdftotext', [...(options.raw ? ['-raw'] : []), '-enc', 'UTF-8', join(dir, 'doc.pdf'), '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('render', () => {
  let t: TestApp;
  let pro: TestAccount;
  const clock = new ManualClock(new Date('2026-03-10T10:00:30Z'));

  before(async () => {
    t = await testApp({ clock });
    pro = await createAccount(t.services, 'pro');
    const up = await t.app.inject({ method: 'POST', url: '/api/v1/assets', headers: pro.headers, payload: { name: 'logo.png', content_base64: PNG_1PX } });
    assert.equal(up.statusCode, 201, up.body);
  });
  after(() => t.close());

  const create = async (name: string, source: string, who = pro) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: who.headers, payload: { name, latex_with_placeholders: source } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { template: { id: number; version: number; name: string }; schema: Record<string, unknown>; sample_data: Record<string, unknown> };
  };
  const render = (id: number | string, payload: unknown, who = pro) =>
    t.app.inject({ method: 'POST', url: `/api/v2/templates/${id}/render`, headers: who.headers, payload: payload as object });
  const fetchPdf = async (pdfUrl: string) => {
    const url = new URL(pdfUrl);
    const res = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    return res.rawPayload;
  };
  const used = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;

  it('invoice: derived schema and sample data render with line items, totals and a stored logo', async () => {
    const { template, schema, sample_data } = await create('invoice', INVOICE);
    const props = schema.properties as Record<string, { type?: unknown; format?: string; items?: { properties: Record<string, { type: unknown }> } }>;
    assert.equal(props.total!.type, 'number');
    assert.equal(props.issue_date!.format, 'date');
    assert.equal(props.items!.type, 'array');
    assert.equal(props.items!.items!.properties.unit_price!.type, 'number');
    assert.equal(props.items!.items!.properties.quantity!.type, 'number');
    assert.ok(!(schema.required as string[]).includes('notes'), 'notes is guarded by if');
    assert.ok((schema.required as string[]).includes('items'));

    const before = await used();
    const res = await render(template.id, { data: sample_data });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.template, { id: template.id, name: 'invoice', version: 1 });
    assert.equal(typeof body.render_time_ms, 'number');
    assert.equal(body.compiler, 'pdflatex');
    assert.deepEqual(body.stored_assets_used, ['logo.png']);
    assert.equal(body.pages, 1);
    assert.equal(await used(), before + 1, 'a render counts toward the monthly cap');

    const text = pdfText(await fetchPdf(body.pdf_url));
    const data = sample_data as { invoice_number: string; customer: { name: string }; items: Array<{ description: string }> };
    assert.match(text, new RegExp(`Invoice ${data.invoice_number}`));
    assert.match(text, new RegExp(data.customer.name));
    for (const item of data.items) assert.ok(text.includes(item.description), item.description);
    assert.match(text, /\$251\.00/);
    assert.match(text, /Total due: \$125\.50/);
    assert.match(text, /January 14, 2026/);
  });

  it('certificate: fontspec selects xelatex; {{{ }}} inside \\textbf works', async () => {
    const { template, sample_data } = await create('certificate', CERTIFICATE);
    const res = await render('CERTIFICATE', { data: { ...sample_data, recipient_name: 'Zoë O’Brien & Co. 100%' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().compiler, 'xelatex');
    assert.equal(res.json().template.id, template.id);
    const text = pdfText(await fetchPdf(res.json().pdf_url));
    assert.match(text, /Zoë O’Brien & Co\. 100%/);
    assert.match(text, /completed Sample title on 14 January 2026/);
  });

  it('letter: LaTeX {% comments and \\def bodies coexist with Liquid', async () => {
    const { sample_data, schema } = await create('letter', LETTER);
    assert.deepEqual((schema.required as string[]).sort(), ['body', 'date', 'recipient', 'sender']);
    const res = await render('letter', { data: sample_data });
    assert.equal(res.statusCode, 200, res.body);
    const text = pdfText(await fetchPdf(res.json().pdf_url));
    assert.match(text, /Dear Jane Doe,/);
    assert.match(text, /Thank you for your business\./);
    assert.match(text, /Sincerely,/);
    assert.equal(text.match(/Jane Doe/g)!.length, 3);
  });

  it('refuses bad data before compiling, at no cost', async () => {
    const { template } = await create('refusals', INVOICE);
    const before = await used();
    for (const data of [undefined, null, 'x', 5, [1]]) {
      const res = await render(template.id, data === undefined ? {} : { data });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error, 'invalid_data_shape', JSON.stringify(data));
    }
    const res = await render(template.id, { data: { invoice_number: 'A1', total: '12', items: [{ description: 'x', unit_price: 1 }], extra: 'ignored' } });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.error, 'schema_validation_failed');
    assert.deepEqual(body.missing_fields.sort(), ['currency', 'customer', 'issue_date', 'items[0].quantity'].sort());
    assert.deepEqual(body.type_errors, [{ field: 'total', expected: 'number', got: 'string' }]);
    assert.equal(await used(), before);
  });

  it('render_failed, render_asset_not_found, and a compile failure with diagnosis', async () => {
    const undefinedVar = await create('undefined-var', '\\documentclass{article}\\begin{document}{% if show %}{{ hidden }}{% endif %}\\end{document}');
    let res = await render(undefinedVar.template.id, { data: { show: true } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'render_failed');
    assert.match(res.json().message, /undefined variable: hidden/);

    const huge = await create('huge', '\\documentclass{article}\\begin{document}{% for i in (1..900000000) %}x{% endfor %}\\end{document}');
    res = await render(huge.template.id, { data: {} });
    assert.equal(res.json().error, 'render_failed');
    assert.match(res.json().message, /limit/);

    const missingAsset = await create('missing-asset', '\\documentclass{article}\\usepackage{graphicx}\\begin{document}\\includegraphics{{{ img | asset }}}\\end{document}');
    res = await render(missingAsset.template.id, { data: { img: 'nothere.png' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'render_asset_not_found');
    assert.equal(res.json().asset, 'nothere.png');
    const missingGraphic = await create('missing-graphic', '\\documentclass{article}\\usepackage{graphicx}\\begin{document}\\includegraphics{photo.jpg}{{ x }}\\end{document}');
    res = await render(missingGraphic.template.id, { data: { x: 1 } });
    assert.equal(res.json().error, 'render_asset_not_found');
    assert.equal(res.json().asset, 'photo.jpg');

    const before = await used();
    const failing = await create('failing', '\\documentclass{article}\\begin{document}\\undefinedmacro {{ x }}\\end{document}');
    res = await render(failing.template.id, { data: { x: 'y' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'compilation_failed');
    assert.equal(res.json().diagnosis.error_class, 'undefined_command');
    assert.equal(await used(), before, 'a failed render costs nothing');
  });

  it('a `raw` value cannot smuggle a forbidden command into the document', async () => {
    const raw = await create('raw', '\\documentclass{article}\\begin{document}{{ body | raw }}\\end{document}');
    const res = await render(raw.template.id, { data: { body: '\\immediate\\write18{id}' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error, 'template_security_violation');
    assert.equal(res.json().rule, 'shell_escape');
  });

  it('per-minute render limit per account → 429 render_rate_limited with retry_after_seconds', async () => {
    const limit = t.services.config.renderPerMinute;
    const account = await createAccount(t.services, 'starter');
    const { template } = await create('rate', '\\documentclass{article}\\begin{document}{% if a %}{{ b }}{% endif %}\\end{document}', account);
    clock.set('2026-03-10T10:05:20Z');
    for (let i = 0; i < limit; i++) {
      const res = await render(template.id, { data: { a: true } }, account);
      assert.equal(res.json().error, 'render_failed');
    }
    const limited = await render(template.id, { data: { a: true } }, account);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error, 'render_rate_limited');
    assert.equal(limited.json().retry_after_seconds, 40);
    assert.equal(limited.headers['retry-after'], '40');
    clock.set('2026-03-10T10:06:00Z');
    assert.equal((await render(template.id, { data: { a: true } }, account)).json().error, 'render_failed');
  });

  it('the whole call is capped: 504 render_total_timeout', async () => {
    const { template, sample_data } = await create('slow', LETTER);
    const saved = t.services.templates.renderWallClockMs;
    t.services.templates.renderWallClockMs = 1;
    try {
      const res = await render(template.id, { data: sample_data });
      assert.equal(res.statusCode, 504);
      assert.equal(res.json().error, 'render_total_timeout');
    } finally {
      t.services.templates.renderWallClockMs = saved;
    }
  });

  it('V2 render on Free → 403 plan_required', async () => {
    const free = await createAccount(t.services, 'free');
    const res = await render(1, { data: {} }, free);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'plan_required');
  });

  it('property: any string value prints literally and leaves the document structure intact', async () => {
    const PER_DOC = 12;
    const source = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[margin=1cm]{geometry}
\hyphenpenalty=10000 \exhyphenpenalty=10000 \raggedright
\begin{document}
{% for v in values %}\par QSTART{{ forloop.index }}Q{{ v }}QEND{{ forloop.index }}Q
{% endfor %}\par DOCUMENTEND
\end{document}
`;
    const { template } = await create('property', source);
    const printable = fc.constantFrom(
      ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
      'é', 'ü', 'ñ', 'ß', 'Æ', '\n', '\t', '{%', '{{', '}}', '%}', '\\\\', '--', ',,', '``', "''", '\\write18',
    );
    const value = fc.array(printable, { maxLength: 30 }).map((parts) => parts.join(''));
    const squash = (s: string) => s.replace(/\s+/g, '');
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: PER_DOC, maxLength: PER_DOC }), async (values) => {
        const res = await render(template.id, { data: { values } });
        assert.equal(res.statusCode, 200, res.body);
        const text = squash(pdfText(await fetchPdf(res.json().pdf_url), { raw: true }));
        let at = 0;
        values.forEach((v, i) => {
          const start = `QSTART${i + 1}Q`;
          const end = `QEND${i + 1}Q`;
          const s = text.indexOf(start, at);
          assert.ok(s >= 0, `marker ${start} in order`);
          const e = text.indexOf(end, s);
          assert.ok(e >= 0, `marker ${end}`);
          assert.equal(text.slice(s + start.length, e), squash(v), `value ${i + 1} printed literally`);
          at = e;
        });
        assert.ok(text.endsWith('DOCUMENTEND') || text.includes('DOCUMENTEND'), 'document ends normally');
      }),
      // A value ending in a hyphen before its line break once lost the hyphen to pdftotext's
      // de-hyphenation: kept as a fixed example.
      { numRuns: 25, examples: [[Array.from({ length: PER_DOC }, (_, i) => (i === 0 ? 'x--\n' : 'y-\n'))]] },
    );
  });
});
