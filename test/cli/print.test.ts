// The compiler-style text of `quire compile` (src/cli/client/print.ts) on log excerpts TeX
// really writes with -file-line-error: where it stopped, the caret under the token it read
// last (a control word, one with its braced arguments, a line TeX shows cut with "..."), and
// the one-line summaries of a delivered PDF.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { caret, firstStop, formatSuccess, formatWarnings } from '../../src/cli/client/print.js';

describe('quire compile output', () => {
  test('the first file:line stop of a log, with TeX\'s context line', () => {
    const log = '(./main.tex (./chapters/intro.tex\n./chapters/intro.tex:2: Undefined control sequence.\nl.2 The distance is \\SI\n                        {3}{\\metre}\nThe control sequence at the end\n./chapters/intro.tex:2:  ==> Fatal error occurred, no output PDF file produced!\n';
    assert.deepEqual(firstStop(log), { file: 'chapters/intro.tex', line: 2, message: 'Undefined control sequence.', before: 'The distance is \\SI' });
    assert.equal(firstStop('No pages of output.\n'), null);
  });

  test('the caret goes under the last token TeX read', () => {
    assert.deepEqual(caret(7, 'The distance is \\SI{3}{\\metre}.', 'The distance is \\SI'), ['    7 | The distance is \\SI{3}{\\metre}.', '      |                 ^~~']);
    assert.deepEqual(caret(4, '  \\end{enumerate}', '  \\end{enumerate}'), ['    4 |   \\end{enumerate}', '      |   ^~~~~~~~~~~~~~~']);
    assert.deepEqual(caret(1, 'a \\bad b', 'a \\bad '), ['    1 | a \\bad b', '      |   ^~~~']);
    // A long line TeX shows cut: found by its tail.
    const long = `${'word '.repeat(20)}\\oops rest`;
    assert.deepEqual(caret(3, long, `...${'word '.repeat(8)}\\oops`)[1], `      | ${' '.repeat(100)}^~~~~`);
    // Context that is not on the line (a macro's body): the line alone.
    assert.deepEqual(caret(3, 'plain', '\\mymacro'), ['    3 | plain']);
  });

  test('the summary line and warnings', () => {
    assert.equal(
      formatSuccess('thesis/main.pdf', { pages: 12, compilation_time_ms: 1400, usage: { plan: 'pro', monthly_limit: 2000, used_this_month: 37 } }, 2100),
      'wrote thesis/main.pdf: 12 pages, 1.40 s on the server, 2.10 s end to end (pro: 37/2000 this month)',
    );
    assert.equal(formatSuccess('main.pdf', { pages: 1, compilation_time_ms: 310, anonymous: true, remaining_today: 2 }, 650), 'wrote main.pdf: 1 page, 0.31 s on the server, 0.65 s end to end (keyless: 2 left today)');
    assert.deepEqual(formatWarnings([{ type: 'undefined_citation', message: 'The citation "x" is not in the bibliography.', line: 4, fix: 'Add it.' }], 'main.tex'), [
      'main.tex:4: warning: The citation "x" is not in the bibliography.\n  fix: Add it.',
    ]);
  });
});
