// Undefined commands (src/tex/diagnosis/rules/commands.ts) from TeX logs written out: the
// table's package, LaTeX's "Not loaded." stubs, and commands inside the generated .bbl.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzeLog } from '../../../src/tex/diagnosis/index.js';

const source = '\\documentclass{article}\n\\begin{document}\nSee \\url{x}.\n\\end{document}\n';

describe('undefined commands', () => {
  it('the table names the package, certain', () => {
    const a = analyzeLog('./main.tex:3: Undefined control sequence.\nl.3 See \\url\n               {x}.\n', 'pdflatex', { source, catalog: null });
    assert.deepEqual(a.diagnosis, {
      error_class: 'undefined_command',
      summary: 'The command \\url on line 3 is not defined. It is provided by the package url, which the document does not load.',
      suggested_fix: 'Add \\usepackage{url} to the preamble (after \\documentclass, before \\begin{document}): it provides \\url.',
      suggested_package: 'url',
      confidence: 'certain',
      symbol: '\\url',
      line: 3,
      retryable: true,
    });
  });

  it('issue 39: an unknown package page style (\\undefinedpagestyle since LaTeX 2025) names the package that defines the style', () => {
    const src = '\\documentclass{article}\n\\thispagestyle{scrheadings}\n\\begin{document}\nText.\n\\end{document}\n';
    const log = './main.tex:2: Undefined control sequence.\n<argument> \\undefinedpagestyle \n                            \nl.2 \\thispagestyle{scrheadings}\n';
    const a = analyzeLog(log, 'pdflatex', { source: src, catalog: null });
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.line], ['undefined_command', '\\undefinedpagestyle', 'scrlayer-scrpage', 2]);
    assert.equal(a.diagnosis?.suggested_fix, 'Add \\usepackage{scrlayer-scrpage} to the preamble above line 2: it defines the page style "scrheadings" used on line 2.');
    // A style no package table knows stays a plain undefined command, with no package.
    const other = analyzeLog(log.replace('scrheadings', 'mystyle'), 'pdflatex', { source: src.replace('scrheadings', 'mystyle'), catalog: null });
    assert.equal(other.diagnosis?.suggested_package, undefined);
  });

  it('issue 39: a context line that ends in two spaces (<recently read> \\name) still names the command', () => {
    const src = '\\documentclass{article}\n\\clearpairofpagestyles\n\\begin{document}\nText.\n\\end{document}\n';
    const log = './main.tex:2: Undefined control sequence.\n<recently read> \\clearpairofpagestyles  \n                                        \nl.2 \\clearpairofpagestyles\n';
    const a = analyzeLog(log, 'pdflatex', { source: src, catalog: null });
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.line], ['undefined_command', '\\clearpairofpagestyles', 2]);
  });

  it('"Not loaded." from the stub LaTeX defines until a language package loads is an undefined \\selectlanguage', () => {
    const log = './main.tex:3: Not loaded.\n\\selectlanguage ->\\errhelp {Selecting a language requires a package supporting it}\\errmessage {Not loaded}\n                                                                                                          \nl.3 \\selectlanguage\n                   {ngerman}Hallo.\n';
    const a = analyzeLog(log, 'pdflatex', { source: '\\documentclass{article}\n\\begin{document}\n\\selectlanguage{ngerman}Hallo.\n\\end{document}\n', catalog: null });
    assert.equal(a.diagnosis?.error_class, 'undefined_command');
    assert.equal(a.diagnosis?.symbol, '\\selectlanguage');
    assert.equal(a.diagnosis?.suggested_package, 'babel');
    assert.equal(a.diagnosis?.line, 3);
  });

  it('TeX Live 2026\'s words for the same stub, its expansion cut to "...", are the same diagnosis', () => {
    const log = './main.tex:4: No multilingual package has been loaded.\n\\selectlanguage ...ingual package has been loaded}\n                                                  \nl.4 \\selectlanguage\n                   {ngerman}\nSelecting a language requires a package supporting it\n';
    const a = analyzeLog(log, 'pdflatex', { source: '\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\n\\selectlanguage{ngerman}\nHallo.\n\\end{document}\n', catalog: null });
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.symbol, a.diagnosis?.suggested_package, a.diagnosis?.line], ['undefined_command', '\\selectlanguage', 'babel', 4]);
  });

  it('another "Not loaded." (no stub in the context) is left alone', () => {
    const a = analyzeLog('./main.tex:3: Not loaded.\nl.3 \\foo\n', 'pdflatex', { source, catalog: null });
    assert.equal(a.diagnosis, undefined);
  });

  it('a bibliography command inside the generated .bbl maps to its package (\\url after \\urlprefix, \\doi, jurabib)', () => {
    const bib = '\\documentclass{article}\n\\begin{document}\n\\cite{k}\n\\bibliographystyle{x}\n\\bibliography{refs}\n\\end{document}\n';
    const url = analyzeLog('./main.bbl:7: Undefined control sequence.\nl.7 \\newblock \\urlprefix\\url\n                            {https://example.org}\n', 'pdflatex', { source: bib, catalog: null });
    assert.deepEqual([url.diagnosis?.symbol, url.diagnosis?.suggested_package, url.diagnosis?.line], ['\\url', 'url', undefined]);
    const doi = analyzeLog('./main.bbl:9: Undefined control sequence.\nl.9 \\newblock \\doi\n                   {10.1000/182}\n', 'pdflatex', { source: bib, catalog: null });
    assert.deepEqual([doi.diagnosis?.symbol, doi.diagnosis?.suggested_package], ['\\doi', 'doi']);
    const jura = analyzeLog('./main.bbl:4: Undefined control sequence.\nl.4 \\jbbibargs\n                {\\bibnf {Author}}\n', 'pdflatex', { source: bib, catalog: null });
    assert.deepEqual([jura.diagnosis?.symbol, jura.diagnosis?.suggested_package], ['\\jbbibargs', 'jurabib']);
    // bibunits writes one bibliography per unit (bu1.bbl, bu2.bbl, …).
    const unit = analyzeLog('./bu1.bbl:6: Undefined control sequence.\nl.6 \\jbdy\n            {2020}\n', 'pdflatex', { source: bib, catalog: null });
    assert.deepEqual([unit.diagnosis?.symbol, unit.diagnosis?.suggested_package], ['\\jbdy', 'jurabib']);
  });

  it('in another file a package or class loads, an undefined command gets no package rule', () => {
    const a = analyzeLog('./mystyle.sty:4: Undefined control sequence.\nl.4 \\url\n', 'pdflatex', { source, catalog: null });
    assert.equal(a.diagnosis, undefined);
  });
});
