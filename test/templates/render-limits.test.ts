// Bounds on render inputs and on the render itself, without TeX: the data-size measure, the
// LaTeX escaper on large inputs (it used to need ~40 bytes of heap per character), the render
// pool's time limit, replacement of a killed worker and queueing, and the policy's view of
// escaped text (any string, escaped, never trips a rule).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors.js';
import { checkDataSize, jsonSizeUpTo, RENDER_DATA_MAX_BYTES } from '../../src/templates/data-size.js';
import { escapeLatex } from '../../src/templates/escape.js';
import { RenderPool } from '../../src/templates/render-pool.js';
import { findViolation } from '../../src/templates/security.js';

/** The escaper as it was before it became one regular expression: the reference it must match. */
function referenceEscape(input: string): string {
  const MAP: Record<string, string> = {
    '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '#': '\\#', '^': '\\textasciicircum{}',
    _: '\\_', '~': '\\textasciitilde{}', '%': '\\%', '<': '\\textless{}', '>': '\\textgreater{}', '|': '\\textbar{}',
    '"': '\\textquotedbl{}', "'": '\\textquotesingle{}', '`': '\\textasciigrave{}', '\t': ' ',
  };
  const DROPPED = /^(?:[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDFFF])$/;
  let out = '';
  const chars = Array.from(input.replace(/\r\n?/g, '\n'));
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\n') {
      out += '\\leavevmode\\newline{}';
      continue;
    }
    if (MAP[ch] !== undefined) {
      out += MAP[ch];
      continue;
    }
    if (DROPPED.test(ch)) continue;
    out += ch;
    if ((ch === '-' || ch === ',') && chars[i + 1] === ch) out += '\\kern0pt{}';
  }
  return out;
}

const json = fc.jsonValue({ maxDepth: 4 });

describe('render data size', () => {
  it('property: the measure is the UTF-8 size of the JSON text, and stops past the limit', () => {
    fc.assert(
      fc.property(json, (value) => {
        const exact = Buffer.byteLength(JSON.stringify(value));
        assert.equal(jsonSizeUpTo(value, 1e9), exact);
        assert.equal(jsonSizeUpTo(value, Math.max(0, exact - 1)), Math.max(0, exact - 1) + 1);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses over 1 MB with data_too_large (413) and a 100 MB string without reading it', () => {
    assert.equal(RENDER_DATA_MAX_BYTES, 1024 * 1024);
    checkDataSize({ s: 'x'.repeat(RENDER_DATA_MAX_BYTES - 10) });
    const huge = 'x'.repeat(100 * 1024 * 1024);
    const started = performance.now();
    assert.throws(
      () => checkDataSize({ a: [1, { b: huge }] }),
      (err: unknown) => err instanceof ServiceError && err.code === 'data_too_large' && err.status === 413 && err.details.limit_bytes === RENDER_DATA_MAX_BYTES,
    );
    assert.ok(performance.now() - started < 50, 'refused without a pass over the string');
    // Deep nesting is measured without recursion.
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(jsonSizeUpTo(deep, 1e9), 200_003);
  });
});

describe('escapeLatex on large inputs', () => {
  it('property: the same output as the reference, character for character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: fc.constantFrom('-', ',', '\r', '\n', '\\', 'a', '\uD800', '\uDC00'), maxLength: 20 }), (a, b) => {
        assert.equal(escapeLatex(a + b), referenceEscape(a + b));
      }),
      { numRuns: 5000 },
    );
  });

  it('property: slicing a long input never splits \\r\\n, a surrogate pair, -- or ,,', () => {
    const unit = fc.constantFrom('-', ',', '\r', '\n', 'a', '\\', '\uD83D\uDE00', '\uD800', '\uDC00', 'é');
    fc.assert(
      fc.property(fc.array(unit, { minLength: 1, maxLength: 40 }), fc.integer({ min: 65_500, max: 65_560 }), (tail, pad) => {
        const input = 'x'.repeat(pad) + tail.join('') + '-'.repeat(70_000) + tail.join('');
        assert.equal(escapeLatex(input), referenceEscape(input));
      }),
      { numRuns: 60 },
    );
  });

  it('escapes 20 MB of text, or 4 MB of special characters (37 MB out), inside a 128 MB heap', () => {
    // A child process with a small heap: the per-character escaper needed ~40 bytes per input
    // character (800 MB and 160 MB here).
    const escaper = new URL('../../src/templates/escape.ts', import.meta.url).href;
    for (const [unit, size] of [['Plain words, a_b & 50% -- done.\n', 20_000_000], ['\\{}$&#^_~%<>|"\'`', 4_000_000]] as const) {
      const code = `import { escapeLatex } from ${JSON.stringify(escaper)};
        const input = ${JSON.stringify(unit)}.repeat(Math.ceil(${size} / ${unit.length}));
        const out = escapeLatex(input);
        process.stdout.write(String(out.length) + ' ' + out.slice(0, 60));`;
      const run = spawnSync(process.execPath, ['--max-old-space-size=128', '--import', 'tsx', '--input-type=module', '-e', code], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, 0, `${JSON.stringify(unit)}: ${run.stderr.split('\n').slice(0, 5).join(' ')}`);
      const [length, head] = [Number(run.stdout.split(' ')[0]), run.stdout.slice(run.stdout.indexOf(' ') + 1)];
      assert.ok(length > size * 2, `${length}`);
      assert.ok(escapeLatex(unit.repeat(3)).startsWith(head), head);
    }
  });
});

describe('render pool', () => {
  const pool = new RenderPool({ size: 1, timeoutMs: 1000, heapMb: 128 });
  after(() => pool.close());

  it('a render that runs past the limit is terminated; queued renders then run on a fresh worker', async () => {
    const hang = '{% for a in (1..9000) %}{% for b in (1..9000) %}{% for c in (1..9000) %}{% endfor %}{% endfor %}{% endfor %}';
    const started = performance.now();
    const results = await Promise.allSettled([pool.render(hang, {}), pool.render('{{ a }}', { a: 'after' }), pool.render('{{ a }}', { a: 'again' })]);
    const [killed, next, again] = results;
    assert.equal(killed.status, 'rejected');
    const err = (killed as PromiseRejectedResult).reason as ServiceError;
    assert.equal(err.code, 'render_failed');
    assert.deepEqual(err.details, { limit_seconds: 1 });
    assert.deepEqual(
      [next, again].map((r) => (r.status === 'fulfilled' ? r.value.latex : String(r.reason))),
      ['after', 'again'],
    );
    assert.equal(pool.replaced, 1);
    assert.ok(performance.now() - started < 30_000);
  });

  it('catalogue errors cross the thread with their code and details', async () => {
    await assert.rejects(pool.render('{{ x | asset }}', { x: 'missing.png' }, []), (err: unknown) => {
      return err instanceof ServiceError && err.code === 'render_asset_not_found' && err.details.asset === 'missing.png';
    });
    await assert.rejects(pool.render('{{ v | raw }}', { v: '\\input{/etc/passwd}' }), (err: unknown) => {
      return err instanceof ServiceError && err.code === 'template_security_violation' && err.details.rule === 'unsafe_path';
    });
  });
});

describe('the policy and escaped values', () => {
  it('property: any string, escaped, in text, in PDF metadata or after a link scheme, never trips a rule', () => {
    const contexts = [
      (v: string) => `\\documentclass{article}\n\\begin{document}\n${v}\n\\textbf{${v}}\n\\end{document}\n`,
      (v: string) => `\\documentclass{article}\n\\usepackage{hyperref}\n\\hypersetup{pdftitle={${v}}}\n\\begin{document}\n\\href{https://example.com/${v}}{${v}}\n\\end{document}\n`,
    ];
    const tricky = fc.constantFrom('\\', '{', '}', '%', '#', '^', '~', '|', '"', 'write18', 'input', 'csname', '/etc/passwd', 'javascript:', '/JavaScript', 'JAVA#53cript', '\n', ' ', 'os.execute', 'lfs', 'run:');
    fc.assert(
      fc.property(fc.array(fc.oneof(tricky, fc.string({ maxLength: 8 })), { maxLength: 12 }), (parts) => {
        const value = escapeLatex(parts.join(''));
        for (const context of contexts) assert.equal(findViolation(context(value), { rendered: true }), null, value);
      }),
      { numRuns: 1500 },
    );
  });
});
