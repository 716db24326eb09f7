// The packages that block tagging (issue 40), named from the kernel's own tagging-status data
// in the TeX Live 2026 image and the files a transcript shows TeX opening (wrapped at 79 columns).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { kernelText } from '../../src/tex/output/tagging.js';
import { parseStatus, taggingBlockers } from '../../src/tex/output/tagging-status.js';

const STATUS = '/var/lib/quire/texlive/2026/usr/share/texlive/texmf-dist/tex/latex/latex-tagging-status/latex-tagging-status.ltx';

describe('tagging status', () => {
  const table = parseStatus(readFileSync(STATUS, 'latin1'));

  test("the image's data knows listings, titlesec and float as blocking and graphicx as compatible", () => {
    assert.equal(table.get('listings.sty'), 2);
    assert.equal(table.get('titlesec.sty'), 2);
    assert.equal(table.get('float.sty'), 2);
    assert.equal(table.get('graphicx.sty'), 4);
    assert.ok(table.size > 1000);
  });

  test('a transcript names each blocking file once, also where TeX wrapped its path', () => {
    const log = [
      '(/usr/share/texlive/texmf-dist/tex/latex/graphics/graphicx.sty',
      '(/usr/share/texlive/texmf-dist/tex/latex/listings/listings.sty (/usr/share/texli',
      've/texmf-dist/tex/latex/listings/lstmisc.sty)',
      // Wrapped inside the file name: the line is exactly 79 characters.
      `${'('.padEnd(68, 'x')}/titlesec.s`.slice(0, 79),
      'ty) (/usr/share/texlive/texmf-dist/tex/latex/listings/listings.sty)',
      '! Undefined control sequence.',
    ].join('\n');
    assert.equal(log.split('\n')[3]!.length, 79);
    assert.deepEqual(taggingBlockers(log, table), [
      { file: 'listings.sty', status: 'currently incompatible with tagging' },
      { file: 'titlesec.sty', status: 'currently incompatible with tagging' },
    ]);
    assert.deepEqual(taggingBlockers('(/x/graphicx.sty)', table), []);
  });

  test('kernelText escapes every TeX special of a metadata value', () => {
    assert.equal(kernelText('A\\b {x} % # & $ ^ _ ~'), 'A\\QuireBackslash b \\{x\\} \\% \\string# \\string& \\string$ \\string^ \\string_ \\string~');
  });
});
