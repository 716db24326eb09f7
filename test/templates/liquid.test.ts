// The Liquid engine without TeX: escaping, LaTeX-brace rules, filters, strictness, limits,
// schema derivation, data validation and compiler choice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors.js';
import { escapeLatex } from '../../src/templates/escape.js';
import { hasLiquidMarkup } from '../../src/templates/braces.js';
import { checkTemplate, parseTemplate, renderTemplate } from '../../src/templates/liquid.js';
import { deriveSchema } from '../../src/templates/schema.js';
import { chooseCompiler, validateData } from '../../src/templates/validate.js';

async function rejects(work: () => unknown, code: string, fields: Record<string, unknown> = {}): Promise<ServiceError> {
  try {
    await work();
  } catch (err) {
    assert.ok(err instanceof ServiceError, String(err));
    assert.equal(err.code, code, err.message);
    for (const [key, value] of Object.entries(fields)) assert.deepEqual(err.details[key], value, key);
    return err;
  }
  assert.fail(`expected ${code}`);
}

/** Commands the escaper may emit; anything else in its output would be structure. */
const ALLOWED_COMMANDS = new Set([
  '\\textbackslash', '\\{', '\\}', '\\$', '\\&', '\\#', '\\textasciicircum', '\\_', '\\textasciitilde', '\\%',
  '\\textless', '\\textgreater', '\\textbar', '\\textquotedbl', '\\textquotesingle', '\\textasciigrave',
  '\\leavevmode', '\\newline', '\\kern',
]);

describe('escapeLatex', () => {
  it('maps every special character in one pass', () => {
    assert.equal(escapeLatex('\\{}$&#^_~%'), '\\textbackslash{}\\{\\}\\$\\&\\#\\textasciicircum{}\\_\\textasciitilde{}\\%');
    assert.equal(escapeLatex('a\nb\r\nc'), 'a\\leavevmode\\newline{}b\\leavevmode\\newline{}c');
    assert.equal(escapeLatex('\\textbf'), '\\textbackslash{}textbf');
    assert.equal(escapeLatex('--'), '-\\kern0pt{}-');
    assert.equal(escapeLatex('a\u0000b\u001bc'), 'abc');
  });

  it('property: output has only escape commands, balanced braces, and no live special character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (input) => {
        const out = escapeLatex(input);
        // Every backslash starts one of the escaper's own commands.
        for (const match of out.matchAll(/\\([A-Za-z]+|.)/gs)) {
          const cs = match[1]!.length > 1 || /[A-Za-z]/.test(match[1]!) ? `\\${match[1]}` : `\\${match[1]}`;
          assert.ok(ALLOWED_COMMANDS.has(cs), `unexpected command ${cs} in ${JSON.stringify(out)}`);
        }
        const bare = out.replace(/\\([A-Za-z]+|.)/gs, '');
        assert.doesNotMatch(bare, /[$&#^_~%\\]/, 'no unescaped special character');
        let depth = 0;
        for (const ch of bare) {
          if (ch === '{') depth++;
          if (ch === '}') depth--;
          assert.ok(depth >= 0);
        }
        assert.equal(depth, 0, 'braces balanced');
        assert.doesNotMatch(out, /\n/, 'no raw newline (no paragraph breaks)');
      }),
      { numRuns: 5000 },
    );
  });
});

describe('Liquid inside LaTeX', () => {
  it('{{{ x }}} is a literal brace around a placeholder, and {% before a newline is a LaTeX comment', async () => {
    const out = await renderTemplate('\\textbf{{{ name }}} \\def\\x#1{%\n#1} {{{{ n }}}}', { name: 'A_B', n: 1 });
    assert.equal(out.latex, '\\textbf{A\\_B} \\def\\x#1{%\n#1} {{1}}');
  });

  it('LaTeX double braces that cannot start an expression stay LaTeX', async () => {
    const out = await renderTemplate('{{\\bf x}} \\frac{{}}{2} {% a LaTeX comment\n', {});
    assert.equal(out.latex, '{{\\bf x}} \\frac{{}}{2} {% a LaTeX comment\n');
    assert.equal(hasLiquidMarkup('{{\\bf x}} {%\n'), false);
    assert.equal(hasLiquidMarkup('{{ x }}'), true);
    assert.equal(hasLiquidMarkup('{%- if x -%}{% endif %}'), true);
  });

  it('the raw filter opts out of escaping; raw blocks keep braces', async () => {
    const out = await renderTemplate('{{ v | raw }} {{ v }} {% raw %}{{ kept }}{% endraw %}', { v: '\\emph{x}' });
    assert.equal(out.latex, '\\emph{x} \\textbackslash{}emph\\{x\\} {{ kept }}');
  });

  it('syntax errors name the line and say how to write braces', async () => {
    const err = await rejects(() => parseTemplate('line1\nline2 {{ name \nline3'), 'liquid_syntax_error', { line: 2 });
    assert.match(err.message, /^Line 2: /);
    assert.match(err.message, /\{\{ "\{\{" \| raw \}\}/);
    const tag = await rejects(() => parseTemplate('a\nb\n{% if x %}open'), 'liquid_syntax_error', { line: 3 });
    assert.match(tag.message, /not closed/);
    await rejects(() => parseTemplate('{{ x | bogus }}'), 'liquid_syntax_error');
    await rejects(() => renderTemplate('{{ x', {}), 'render_parse_failed');
    await rejects(() => renderTemplate('{{ x | bogus }}', { x: 1 }), 'render_failed');
  });

  it('no file-system tags: include, render, layout are security violations', async () => {
    for (const source of ['{% include "x" %}', '{% render "x" %}', '{% layout "x" %}']) {
      await rejects(() => parseTemplate(source), 'template_security_violation', { rule: 'liquid_file_tags', rule_number: 13, line: 1 });
      await rejects(() => checkTemplate(`a\n${source}`), 'template_security_violation', { line: 2 });
    }
  });

  it('strict variables (with if/default lenient), resource limits', async () => {
    await rejects(() => renderTemplate('{{ a.b }}', { a: {} }), 'render_failed');
    const ok = await renderTemplate('{% if a %}x{% endif %}{{ b | default: "d" }}', {});
    assert.equal(ok.latex, 'd');
    await rejects(() => renderTemplate('{% for i in (1..100000000) %}{{ i }}{% endfor %}', {}), 'render_failed');
    await rejects(() => renderTemplate('{% assign s = "xxxxxxxxxx" %}{% for i in (1..30) %}{% assign s = s | append: s %}{% endfor %}{{ s }}', {}), 'render_failed');
    // Prototype properties are not data.
    await rejects(() => renderTemplate('{{ a.constructor }}', { a: {} }), 'render_failed');
  });

  it('filters: currency, date, asset', async () => {
    const out = await renderTemplate('{{ a | currency }}|{{ a | currency: "EUR" }}|{{ s | currency: "GBP" }}|{{ d | date }}|{{ d | date: "%Y/%m/%d" }}', {
      a: 1234.5,
      s: '7',
      d: '2026-02-03',
    });
    assert.equal(out.latex, '\\$1,234.50|€1,234.50|£7.00|February 3, 2026|2026/02/03');
    await rejects(() => renderTemplate('{{ a | currency }}', { a: 'abc' }), 'render_failed');
    await rejects(() => renderTemplate('{{ a | currency: "NOPE1" }}', { a: 1 }), 'render_failed');
    await rejects(() => renderTemplate('{{ d | date }}', { d: 'not a date' }), 'render_failed');
    // A format whose output equals the input is still a date (issue #14): the most common one.
    const same = await renderTemplate('{{ d | date: "%Y-%m-%d" }}|{{ t | date: "%Y-%m-%dT%H:%M:%S" }}', {
      d: '2026-12-01',
      t: '2026-12-01T08:30:00',
    });
    assert.equal(same.latex, '2026-12-01|2026-12-01T08:30:00');
    await rejects(() => renderTemplate('{{ d | date: "%Y-%m-%d" }}', { d: '2026-13-45' }), 'render_failed');
    await rejects(() => renderTemplate('{{ d | date: "not a date" }}', { d: 'not a date' }), 'render_failed');

    const assets = await renderTemplate('\\includegraphics{{{ logo | asset }}} \\includegraphics[width=1cm]{Photo}', { logo: 'my_logo.PNG' }, { assetNames: ['My_Logo.png', 'photo.jpg'] });
    assert.equal(assets.latex, '\\includegraphics{My_Logo.png} \\includegraphics[width=1cm]{Photo}');
    assert.deepEqual(assets.assets.sort(), ['My_Logo.png', 'photo.jpg']);
    await rejects(() => renderTemplate('{{ x | asset }}', { x: 'missing.png' }, { assetNames: [] }), 'render_asset_not_found', { asset: 'missing.png' });
    await rejects(() => renderTemplate('{{ x | asset }}', { x: '../etc/passwd' }, { assetNames: [] }), 'render_asset_not_found');
    await rejects(() => renderTemplate('\\includegraphics{gone.png}', {}, { assetNames: [] }), 'render_asset_not_found', { asset: 'gone.png' });
    // Names TeX itself provides (no extension, not in the library) are left to TeX.
    assert.deepEqual((await renderTemplate('\\includegraphics{example-image}', {}, { assetNames: [] })).assets, []);
  });
});

describe('deriveSchema', () => {
  it('infers types, nesting, arrays of objects and optional fields', () => {
    const source = [
      '{{ customer.name }} {{ customer.address.city }}',
      '{% for line in lines %}{{ line.label }} {{ line.amount | currency }} {% for t in line.tags %}{{ t }}{% endfor %}{% endfor %}',
      '{{ due | date: "%Y" }} {{ subtotal | plus: tax }}',
      '{% if discount > 0 %}{{ discount }}{% endif %}',
      '{% unless paid %}unpaid{% endunless %}',
      '{{ note | default: "-" }}',
      '{% assign local = customer.name | upcase %}{{ local }}',
      '{% capture c %}{{ title }}{% endcapture %}{{ c }}',
      '{{ forloop_free }}',
    ].join('\n');
    const { schema, sample_data } = deriveSchema(source);
    const p = schema.properties!;
    assert.deepEqual(schema.required, ['customer', 'lines', 'due', 'subtotal', 'tax', 'title', 'forloop_free']);
    assert.deepEqual(p.customer!.required, ['name', 'address']);
    assert.deepEqual(p.customer!.properties!.address!.required, ['city']);
    assert.equal(p.lines!.type, 'array');
    assert.deepEqual(p.lines!.items!.required, ['label', 'amount', 'tags']);
    assert.equal(p.lines!.items!.properties!.amount!.type, 'number');
    assert.equal(p.lines!.items!.properties!.tags!.type, 'array');
    assert.deepEqual(p.due, { type: 'string', format: 'date' });
    assert.equal(p.subtotal!.type, 'number');
    assert.equal(p.tax!.type, 'number');
    assert.equal(p.discount!.type, 'number');
    assert.deepEqual(p.paid, {});
    assert.ok(p.note);
    assert.equal(p.local, undefined);
    assert.equal(p.c, undefined);
    assert.equal(validateData(schema, sample_data), null, 'sample data validates');
    const lines = sample_data.lines as Array<Record<string, unknown>>;
    assert.equal(lines.length, 2);
    assert.equal(typeof lines[0]!.amount, 'number');
  });

  it('a source that does not parse is a liquid_syntax_error', async () => {
    await rejects(() => deriveSchema('{% for x in %}'), 'liquid_syntax_error');
  });
});

describe('validateData', () => {
  const schema = deriveSchema('{{ a }} {{ n | plus: 1 }} {{ d | date }} {% for i in list %}{{ i.x }}{% endfor %} {{ o.p.q }}').schema;

  it('lists every missing field and type error with paths', () => {
    assert.deepEqual(validateData(schema, { a: 'x', n: 'one', d: 'soon', list: [{ x: 1 }, {}, 5], o: { p: {} } }), {
      missing_fields: ['list[1].x', 'o.p.q'],
      type_errors: [
        { field: 'n', expected: 'number', got: 'string' },
        { field: 'd', expected: 'date (ISO 8601 string, e.g. "2026-01-15")', got: 'string (not a date)' },
        { field: 'list[2]', expected: 'object', got: 'number' },
      ],
    });
    assert.deepEqual(validateData(schema, {}), { missing_fields: ['a', 'n', 'd', 'list', 'o'], type_errors: [] });
    assert.equal(validateData(schema, { a: 1, n: 2, d: '2026-01-01', list: [], o: { p: { q: true } }, extra: 1 }), null);
  });
});

describe('chooseCompiler', () => {
  it('fontspec → xelatex, \\directlua → lualatex, else pdflatex', () => {
    assert.equal(chooseCompiler('\\usepackage{fontspec}'), 'xelatex');
    assert.equal(chooseCompiler('\\usepackage[no-math]{fontspec}'), 'xelatex');
    assert.equal(chooseCompiler('\\directlua{tex.print("x")}'), 'lualatex');
    assert.equal(chooseCompiler('\\usepackage{fontspec}\\directlua{x=1}'), 'lualatex');
    assert.equal(chooseCompiler('% \\usepackage{fontspec}\n\\usepackage{amsmath}'), 'pdflatex');
  });
});
