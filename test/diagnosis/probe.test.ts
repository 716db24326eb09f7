// When a probe compile counts as getting TeX past the failing name (src/tex/diagnosis/probe.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probePassed } from '../../src/tex/diagnosis/probe.js';

describe('probe verdicts', () => {
  it('issue 39: TeX ended without an error but wrote an unreadable PDF (a body that typesets nothing: \\balance alone) passes', () => {
    const log = 'This is pdfTeX\n(./main.tex\n)\nOutput written on main.pdf.\nThe PDF could not be measured: WARNING: main.pdf: can\'t find PDF header\n';
    assert.equal(probePassed({ outcome: 'unmeasurable', log }, 'command', 'balance', 12), true);
    // Negative control: the same outcome with TeX's error about the name does not.
    const failed = `./main.tex:12: Undefined control sequence.\nl.12 \\balance\n\n${log}`;
    assert.equal(probePassed({ outcome: 'unmeasurable', log: failed }, 'command', 'balance', 12), false);
  });

  it('issue 39: an error inside a project .tex file the probe inputs passes unless it is the same name', () => {
    const other = './helpers/macros.tex:3: Undefined control sequence.\nl.3 \\othername\n';
    assert.equal(probePassed({ outcome: 'failed', log: other }, 'command', 'clearpairofpagestyles', 2), true);
    // Negative controls: the same name in that file, and an error inside an installed package.
    const same = './helpers/macros.tex:3: Undefined control sequence.\nl.3 \\clearpairofpagestyles\n';
    assert.equal(probePassed({ outcome: 'failed', log: same }, 'command', 'clearpairofpagestyles', 2), false);
    const pkg = '/usr/share/texlive/texmf-dist/tex/latex/foo/foo.sty:10: Undefined control sequence.\nl.10 \\bar\n';
    assert.equal(probePassed({ outcome: 'failed', log: pkg }, 'command', 'clearpairofpagestyles', 2), false);
  });
});
