// Hostile validate input (issue 37, item 1): the shapes that froze the service for up to a
// minute (long and many \usepackage names, 29,000 \input lines) answer quickly with correct
// lines and suggestions, and input past validate's limits is refused before it is counted.
// Canaries: a misspelt package placed after the flood still gets its exact line and its
// suggestion (so the flood was read, not skipped), and refused calls leave the per-minute
// count untouched (the allowed calls after them still pass).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { VALIDATE_LIMITS } from '../../src/compile/validate-limits.js';
import { testApp, type TestApp } from '../helpers.js';

type Finding = { kind: string; line?: number; name?: string; suggestions?: string[] };

const doc = (preamble: string[], body: string[] = []) => ['\\documentclass{article}', ...preamble, '\\begin{document}', ...body, '\\end{document}', ''].join('\n');

describe('validate against hostile input', () => {
  let t: TestApp;
  // A stopped clock: the per-minute count cannot roll over between the calls it counts.
  const clock = new ManualClock(new Date('2026-03-10T10:00:30Z'));
  before(async () => {
    t = await testApp({ clock, env: { QUIRE_VALIDATE_PER_MINUTE: '6' } });
  });
  after(() => t.close());

  // Keyless, as in the issue; each test its own address so the minute windows do not mix.
  const validate = (ip: string, latex: string) => t.app.inject({ method: 'POST', url: '/api/v1/validate', remoteAddress: ip, payload: { latex } });
  const timed = async (ip: string, latex: string) => {
    const started = performance.now();
    const res = await validate(ip, latex);
    return { res, ms: performance.now() - started };
  };

  test('three 2,000-character \\usepackage names: refused at once, uncounted', async () => {
    const long = (c: string) => `\\usepackage{${c.repeat(2000)}}`;
    const { res, ms } = await timed('203.0.113.1', doc([long('a'), long('b'), long('c')]));
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'validation_failed');
    assert.deepEqual(res.json().fields, [{ field: 'latex', rule: 'maxNameLength', limit: 128, message: 'loads a package with a name of 2000 characters (line 2); names are at most 128' }]);
    console.log(`three 2,000-character names: refused in ${ms.toFixed(0)} ms`);
    assert.ok(ms < 2000, `${ms} ms`);
  });

  test('300 missing \\usepackage names: each found on its line, the first 20 with suggestions, in well under a second of work', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `\\usepackage{qnopkg${i}x}`);
    const { res, ms } = await timed('203.0.113.2', doc([...names, '\\usepackage{graphix}']));
    assert.equal(res.statusCode, 200, res.body);
    const missing = (res.json().findings as Finding[]).filter((f) => f.kind === 'missing_package');
    assert.equal(missing.length, 301);
    assert.deepEqual([missing[0]?.name, missing[0]?.line], ['qnopkg0x', 2]);
    assert.deepEqual([missing[299]?.name, missing[299]?.line], ['qnopkg299x', 301]);
    assert.equal(missing.filter((f) => (f.suggestions ?? []).length > 0).length <= 20, true);
    // The canary: past the suggestion budget the name is still reported, on its line.
    assert.deepEqual([missing[300]?.name, missing[300]?.line, missing[300]?.suggestions], ['graphix', 302, []]);
    console.log(`300 missing packages: answered in ${ms.toFixed(0)} ms`);
    assert.ok(ms < 10_000, `${ms} ms`);
  });

  test('29,000 \\input lines (283 KB): one finding per file read, exact lines, answered quickly', async () => {
    const inputs = Array.from({ length: 29_000 }, () => '\\input{a}');
    const latex = doc(['\\usepackage{amsmath}'], [...inputs, '\\usepackage{hyperef}']);
    const { res, ms } = await timed('203.0.113.3', latex);
    assert.equal(res.statusCode, 200, res.body);
    const findings = res.json().findings as Finding[];
    assert.deepEqual(findings.filter((f) => f.kind === 'missing_file').map((f) => [f.name, f.line]), [['a', 4]]);
    // The canary: a load on the last line before \end{document} is found there, with its suggestion.
    const late = findings.find((f) => f.kind === 'missing_package');
    assert.deepEqual([late?.name, late?.line, late?.suggestions?.[0]], ['hyperef', 29_004, 'hyperref']);
    console.log(`29,000 \\input lines: answered in ${ms.toFixed(0)} ms`);
    assert.ok(ms < 10_000, `${ms} ms`);
  });

  test('past the limits: lines, loads, files read and bytes are refused, and cost no validate call', async () => {
    const ip = '203.0.113.4';
    const refusals = [
      { latex: doc([], Array.from({ length: VALIDATE_LIMITS.lines }, () => 'x')), status: 422, rule: 'maxLines' },
      { latex: doc(Array.from({ length: VALIDATE_LIMITS.loads }, (_, i) => `\\usepackage{p${i}}`)), status: 422, rule: 'maxLoads' },
      { latex: doc([], Array.from({ length: VALIDATE_LIMITS.fileNames + 1 }, (_, i) => `\\input{f${i}}`)), status: 422, rule: 'maxFileReads' },
      { latex: doc([], ['x'.repeat(VALIDATE_LIMITS.bytes)]), status: 413, rule: undefined },
    ];
    for (let round = 0; round < 2; round++) {
      for (const { latex, status, rule } of refusals) {
        const res = await validate(ip, latex);
        assert.equal(res.statusCode, status, res.body);
        if (rule) assert.equal(res.json().fields[0].rule, rule);
        else assert.deepEqual([res.json().error, res.json().limit, res.json().plan_required], ['latex_too_large', VALIDATE_LIMITS.bytes, null]);
      }
    }
    // 8 refusals, then the minute's 6 calls are all still there.
    for (let i = 0; i < 6; i++) assert.equal((await validate(ip, doc([]))).statusCode, 200);
    assert.equal((await validate(ip, doc([]))).statusCode, 429);
  });
});
