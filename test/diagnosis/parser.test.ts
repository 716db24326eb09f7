// The log parser on real logs: classic 79-column wrapped logs (no -file-line-error), the
// Emergency-stop ordering, and the rules that need no TeX run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { analyzeLog, analyzeMissingCharacters, ERROR_CLASSES, missingCharacters } from '../../src/tex/diagnosis/index.js';
import { lastToken, parseErrors, primaryError, unwrap } from '../../src/tex/diagnosis/log.js';
import { COMMAND_PACKAGES, ENVIRONMENT_PACKAGES, PACKAGES } from '../../src/tex/diagnosis/packages.js';
import { closest } from '../../src/tex/diagnosis/names.js';

const LOGS = new URL('../fixtures/broken/logs/', import.meta.url).pathname;
const log = (name: string) => readFileSync(`${LOGS}${name}.log`, 'utf8');
const tex = (name: string) => readFileSync(`${LOGS}${name}.tex`, 'utf8');

describe('log parser: wrapped 79-column logs', () => {
  it('joins a file name TeX broke across lines and names the package', () => {
    const raw = log('wrapped-a');
    assert.ok(raw.split('\n').some((l) => l.length === 79), 'the fixture really is wrapped');
    const name = 'averyveryveryverylongpackagenamethatdoesnotexistanywhereatallreally';
    assert.ok(unwrap(raw).some((l) => l.includes(`\`${name}.sty' not found`)));
    const a = analyzeLog(raw, 'pdflatex', { source: tex('wrapped-a') });
    assert.equal(a.diagnosis?.error_class, 'missing_package');
    assert.equal(a.diagnosis?.symbol, name);
    assert.equal(a.line, 3, 'the \\usepackage line, not the line TeX stopped on');
  });

  it('finds the undefined command at the end of a truncated "l.4 ..." context', () => {
    const a = analyzeLog(log('wrapped-b'), 'pdflatex');
    assert.equal(a.diagnosis?.error_class, 'undefined_command');
    assert.equal(a.diagnosis?.symbol, '\\includegraphics');
    assert.equal(a.diagnosis?.suggested_package, 'graphicx');
    assert.equal(a.line, 4);
    assert.match(a.agent_hint, /^Add \\usepackage\{graphicx\} to the preamble/);
  });

  it('reads a mismatched environment from a classic "!" log', () => {
    const a = analyzeLog(log('wrapped-c'), 'pdflatex', { source: tex('wrapped-c') });
    assert.equal(a.diagnosis?.error_class, 'mismatched_environment');
    assert.equal(a.diagnosis?.symbol, 'itemize');
    assert.equal(a.line, 5);
  });

  it('joins the two-line Unicode error message and reports the codepoint', () => {
    const a = analyzeLog(log('wrapped-d'), 'pdflatex');
    assert.match(a.message ?? '', /Unicode character α \(U\+03B1\) not set up for use with LaTeX/);
    assert.equal(a.diagnosis?.error_class, 'unsupported_unicode');
    assert.equal(a.diagnosis?.symbol, 'U+03B1');
    assert.equal(a.line, 3);
  });

  it('unwraps only logs that look wrapped', () => {
    const line = 'x'.repeat(79);
    assert.deepEqual(unwrap(`${line}\nyy\nz`), [`${line}yy`, 'z']);
    assert.deepEqual(unwrap(`${line}\n${'w'.repeat(100)}`), [line, 'w'.repeat(100)]);
  });
});

describe('log parser: Emergency stop ordering', () => {
  it('never makes Emergency stop or Fatal error the cause when a real error precedes them', () => {
    const blocks = parseErrors(log('emergency-after-error'));
    assert.deepEqual(
      blocks.map((b) => b.message.slice(0, 24)),
      ["LaTeX Error: File `avery", 'Emergency stop.', '==> Fatal error occurred'],
    );
    assert.match(primaryError(blocks)?.message ?? '', /^LaTeX Error: File/);
    const a = analyzeLog(log('emergency-after-error'), 'pdflatex', { source: tex('emergency-after-error') });
    assert.equal(a.diagnosis?.error_class, 'missing_package');
    assert.equal(a.line, 3);
  });

  it('a synthetic log with the stop first and the real error later still picks the real error', () => {
    const synthetic = [
      './main.tex:9: Undefined control sequence.',
      'l.9 Hello \\foo',
      '               bar',
      './main.tex:9: Emergency stop.',
      'l.9 Hello \\foo',
      '               bar',
      './main.tex:9:  ==> Fatal error occurred, no output PDF file produced!',
    ].join('\n');
    const a = analyzeLog(synthetic, 'pdflatex');
    assert.equal(a.message, 'Undefined control sequence.');
    assert.equal(a.diagnosis?.symbol, '\\foo');
    assert.equal(a.line, 9);
  });

  it('a file that ends without \\end{document}: the stop is the only error, explained with the source', () => {
    const withSource = analyzeLog(log('no-end'), 'pdflatex', { source: tex('no-end') });
    assert.equal(withSource.diagnosis?.error_class, 'fatal_error');
    assert.equal(withSource.diagnosis?.symbol, '\\end{document}');
    const without = analyzeLog(log('no-end'), 'pdflatex');
    assert.equal(without.diagnosis, undefined, 'no guess without the source');
    assert.equal(without.message, 'Emergency stop.');
  });
});

describe('unclassifiable and engine-specific', () => {
  it('an unknown error gets no diagnosis but keeps its line and message', () => {
    const a = analyzeLog('./main.tex:7: Package pgfkeys Error: I do not know the key \'/tikz/frobnicate\'.\n\nl.7 \\tikz \\draw[frobnicate=3]\n  (0,0);\n', 'pdflatex');
    assert.equal(a.diagnosis, undefined);
    assert.equal(a.line, 7);
    assert.match(a.agent_hint, /line 7/);
  });

  it('an undefined command inside a package file gets no guessed fix', () => {
    const synthetic = './mypkg.sty:2: Undefined control sequence.\n\\hello ->\\undefinedinsidepkg\n\nl.2 \\hello\n\n./mypkg.sty:2:  ==> Fatal error occurred, no output PDF file produced!\n';
    const a = analyzeLog(synthetic, 'pdflatex', { source: '\\documentclass{article}\n\\usepackage{mypkg}\n' });
    assert.equal(a.diagnosis, undefined);
    assert.equal(a.line, undefined, 'line 2 is in mypkg.sty, not main.tex');
    assert.match(a.agent_hint, /mypkg\.sty line 2/);
  });

  it('an empty log gets a generic hint', () => {
    const a = analyzeLog('', 'pdflatex');
    assert.equal(a.diagnosis, undefined);
    assert.ok(a.agent_hint.length > 0);
  });

  it('missingCharacters ignores nullfont noise and reports real glyph losses with installed fonts', () => {
    assert.equal(missingCharacters('Missing character: There is no ^^A in font nullfont!\n', 'xelatex'), undefined);
    const d = missingCharacters('Missing character: There is no Ж (U+0416) in font [lmroman10-regular]:mapping=tex-text;!\n', 'xelatex', { source: 'a\nЖук\n' });
    assert.equal(d?.error_class, 'unsupported_unicode');
    assert.equal(d?.symbol, 'U+0416');
    assert.equal(d?.line, 2);
    assert.match(d?.suggested_fix ?? '', /\\usepackage\{fontspec\}/);
    const a = analyzeMissingCharacters('Missing character: There is no Ж (U+0416) in font [lmroman10-regular]:mapping=tex-text;!\n', 'xelatex', { source: 'a\nЖук\n' });
    assert.equal(a?.line, 2);
    assert.deepEqual(a?.diagnosis, d);
    assert.match(a?.agent_hint ?? '', /compile again\.$/);
  });

  it('an EC/TC font that cannot be loaded (engine error without "! ") asks for lmodern', () => {
    const synthetic = '[1\n\n{/var/lib/texmf/fonts/map/pdftex/updmap/pdftex.map}] (./main.aux) )\n!pdfTeX error: pdflatex (file tcrm1095): Font tcrm1095 at 600 not found\n ==> Fatal error occurred, no output PDF file produced!\n';
    const a = analyzeLog(synthetic, 'pdflatex', { source: '\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\nx\n\\end{document}\n' });
    assert.equal(a.diagnosis?.error_class, 'fatal_error');
    assert.equal(a.diagnosis?.symbol, 'tcrm1095');
    assert.equal(a.diagnosis?.suggested_package, 'lmodern');
    assert.equal(a.line, 2);
  });

  it('a command from an engine-specific package names the compiler', () => {
    const synthetic = './main.tex:2: Undefined control sequence.\nl.2 \\setmainfont\n                {DejaVu Serif}\n';
    const a = analyzeLog(synthetic, 'pdflatex');
    assert.equal(a.diagnosis?.suggested_package, 'fontspec');
    assert.match(a.diagnosis?.suggested_fix ?? '', /"compiler" to "xelatex"/);
  });
});

describe('tables', () => {
  it('maps at least 200 commands and environments to packages, all with known classes', () => {
    assert.ok(COMMAND_PACKAGES.size + ENVIRONMENT_PACKAGES.size >= 200);
    assert.equal(COMMAND_PACKAGES.get('includegraphics')?.package, 'graphicx');
    assert.equal(ENVIRONMENT_PACKAGES.get('align')?.package, 'amsmath');
    assert.deepEqual(COMMAND_PACKAGES.get('setmainfont')?.engines, ['xelatex', 'lualatex']);
    assert.equal(ERROR_CLASSES.length, 12);
    for (const entry of PACKAGES) assert.match(entry.package, /^[\w-]+$/);
  });

  it('lastToken and closest are strict', () => {
    assert.equal(lastToken('l.3 Hello \\foo'), '\\foo');
    assert.equal(lastToken('\\mycmd ->\\foo '), '\\foo');
    assert.equal(lastToken('l.3 x^'), '^');
    assert.equal(closest('textbff', ['textbf', 'textit']), 'textbf');
    assert.equal(closest('bbm', ['bm']), undefined, 'short names are never matched');
    assert.equal(closest('abcd', ['abce', 'abcf']), undefined, 'ties are not guessed');
  });
});
