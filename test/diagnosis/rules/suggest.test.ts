// Index suggestions (src/tex/diagnosis/rules/suggest.ts): a clear candidate is named without a
// probe; otherwise the probe decides, and without a verdict the best candidate no probe ruled
// out comes unverified.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { texIndexDir } from '../../../src/config.js';
import { ensureCatalog, type TexCatalog } from '../../../src/tex/diagnosis/catalog.js';
import { analyzeLog } from '../../../src/tex/diagnosis/index.js';

const log = './main.tex:3: Undefined control sequence.\nl.3 A jerk: $\\dddot\n                    {x}$.\n';
const plain = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';

describe('index suggestions', () => {
  let catalog: TexCatalog;
  before(async () => {
    const loaded = await ensureCatalog(texIndexDir());
    assert.ok(loaded);
    catalog = loaded;
  });

  it('several candidates and no verdict: a probe is asked for, the first is named unverified', () => {
    const a = analyzeLog(log, 'pdflatex', { source: plain, catalog, probing: true });
    assert.equal(a.verify?.needed, true);
    assert.equal(a.verify?.candidates[0], 'amsmath');
    assert.deepEqual([a.diagnosis?.suggested_package, a.diagnosis?.confidence], ['amsmath', 'unverified']);
  });

  it('one that defines more of the document\'s undefined names than any other is certain, without a probe', () => {
    // mathtools defines \coloneqq, \xmapsto and \prescript too (and loads amsmath for \dddot);
    // bundles that load mathtools cover the same names through it and are no rivals.
    const source = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n$a \\coloneqq b$, $\\xmapsto{f} \\prescript{a}{b}{c}$\n\\end{document}\n';
    const a = analyzeLog(log, 'pdflatex', { source, catalog, probing: true });
    assert.equal(a.verify?.needed, false);
    assert.deepEqual([a.diagnosis?.suggested_package, a.diagnosis?.confidence], ['mathtools', 'certain']);
  });

  it('the only candidate is certain, without a probe', () => {
    const source = '\\documentclass{article}\n\\begin{document}\n\\kant[1]\n\\end{document}\n';
    const a = analyzeLog('./main.tex:3: Undefined control sequence.\nl.3 \\kant\n           [1]\n', 'pdflatex', { source, catalog, probing: true });
    assert.equal(a.verify?.needed, false);
    assert.deepEqual([a.diagnosis?.suggested_package, a.diagnosis?.confidence], ['kantlipsum', 'certain']);
  });

  it('a verdict decides: the package that passed is verified; none passing means no package', () => {
    const passed = analyzeLog(log, 'pdflatex', { source: plain, catalog, probing: true, verdicts: new Map([['command:dddot', 'mathdots']]) });
    assert.deepEqual([passed.diagnosis?.suggested_package, passed.diagnosis?.confidence], ['mathdots', 'verified']);
    const none = analyzeLog(log, 'pdflatex', { source: plain, catalog, probing: true, verdicts: new Map([['command:dddot', null]]) });
    assert.equal(none.diagnosis?.error_class, 'undefined_command');
    assert.equal(none.diagnosis?.suggested_package, undefined);
  });

  it('issue 39: a name packages define gets no edit to a different command (\\dddot is not \\ddot)', () => {
    const none = analyzeLog(log, 'pdflatex', { source: plain, catalog, probing: true, verdicts: new Map([['command:dddot', null]]) });
    assert.doesNotMatch(`${none.diagnosis?.suggested_fix} ${none.agent_hint}`, /\\ddot(?![a-z])/);
    assert.match(none.diagnosis?.suggested_fix ?? '', /^Define \\dddot in the preamble/);
    // Negative control: a name no package defines (a typo of \\textbf) is corrected to the near one.
    const typo = analyzeLog('./main.tex:3: Undefined control sequence.\nl.3 A \\textbff\n                {x}.\n', 'pdflatex', { source: plain.replace('$\\dddot{x}$', '\\textbff{x}'), catalog });
    assert.match(typo.diagnosis?.suggested_fix ?? '', /^Change \\textbff on line 3 to \\textbf/);
  });

  it('issue 39: a name the project\'s own class defines counts as defined by the document', () => {
    const source = '\\documentclass{mycls}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';
    const files = [{ name: 'mycls.cls', data: Buffer.from('\\LoadClass{article}\n\\newcommand{\\dddot}[1]{#1}\n') }];
    // The class defines it, yet TeX says undefined: the cause is not a missing package, so no package is named.
    assert.equal(analyzeLog(log, 'pdflatex', { source, catalog, files }).diagnosis, undefined);
    // Negative control: without the class's file, amsmath is named as for any document.
    assert.equal(analyzeLog(log, 'pdflatex', { source, catalog }).diagnosis?.suggested_package, 'amsmath');
  });

  it('probes that stopped early: the best candidate no probe ruled out, unverified', () => {
    const a = analyzeLog(log, 'pdflatex', { source: plain, catalog, verdicts: new Map([['command:dddot', { failed: ['amsmath'] }]]) });
    assert.ok(a.diagnosis?.suggested_package);
    assert.notEqual(a.diagnosis?.suggested_package, 'amsmath');
    assert.equal(a.diagnosis?.confidence, 'unverified');
  });
});
