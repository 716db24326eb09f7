// The project's other files in a diagnosis (src/tex/diagnosis/project.ts, issue 39): an error
// inside an \input file is diagnosed in that file, a class the project brings corrects a
// misspelt \documentclass, what the project's own classes and packages define counts as
// defined; every read bounded. Each rule with its negative control (the same log without files).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzeLog } from '../../../src/tex/diagnosis/index.js';
import { Project } from '../../../src/tex/diagnosis/project.js';

const file = (name: string, text: string) => ({ name, data: Buffer.from(text) });

describe('project files in a diagnosis', () => {
  const macros = '% helpers\n\\newcommand{\\sender}{Me}\n\\urlstyle{same}\n';
  const main = '\\documentclass{article}\n\\input{helpers/macros}\n\\begin{document}\nText.\n\\end{document}\n';
  const log = './helpers/macros.tex:3: Undefined control sequence.\nl.3 \\urlstyle\n               {same}\n';

  it('an undefined command in an \\input file is read there: named with its file and line, the package above the \\input', () => {
    const a = analyzeLog(log, 'pdflatex', { source: main, catalog: null, files: [file('helpers/macros.tex', macros)] });
    assert.deepEqual(a.diagnosis, {
      error_class: 'undefined_command',
      summary: 'The command \\urlstyle on line 3 of helpers/macros.tex is not defined. It is provided by the package url, which the document does not load.',
      suggested_fix: 'Add \\usepackage{url} to the preamble above line 2 of main.tex: it provides \\urlstyle.',
      suggested_package: 'url',
      confidence: 'certain',
      symbol: '\\urlstyle',
      retryable: true,
    });
    assert.equal(a.line, undefined);
  });

  it('negative control: without the files, an error in another file gets no command diagnosis', () => {
    const a = analyzeLog(log, 'pdflatex', { source: main, catalog: null });
    assert.equal(a.diagnosis, undefined);
    assert.match(a.agent_hint, /helpers\/macros\.tex line 3/);
  });

  it('a package loaded in an \\input preamble counts as loaded', () => {
    const preamble = '\\usepackage{url}\n';
    const src = '\\documentclass{article}\n\\input{preamble}\n\\begin{document}\n\\urlstyle{same}\n\\end{document}\n';
    const body = './main.tex:4: Undefined control sequence.\nl.4 \\urlstyle\n               {same}\n';
    // url is loaded (through preamble.tex), so the cause is something else: no package to add.
    assert.equal(analyzeLog(body, 'pdflatex', { source: src, catalog: null, files: [file('preamble.tex', preamble)] }).diagnosis, undefined);
    // Negative control: the same without preamble.tex sent names url.
    assert.equal(analyzeLog(body, 'pdflatex', { source: src, catalog: null }).diagnosis?.suggested_package, 'url');
  });

  it('a misspelt class is corrected to the class the project brings', () => {
    const src = '\\documentclass{altcv}\n\\begin{document}\nText.\n\\end{document}\n';
    const missing = "! LaTeX Error: File `altcv.cls' not found.\n\nType X to quit or <RETURN> to proceed,\nor enter new name. (Default extension: cls)\n\nEnter file name: \n./main.tex:1: Emergency stop.\n<read *> \n         \nl.1 \\documentclass{altcv}\n";
    const a = analyzeLog(missing, 'pdflatex', { source: src, catalog: null, files: [file('altacv.cls', '\\LoadClass{extarticle}\n')] });
    assert.equal(a.diagnosis?.error_class, 'missing_document_class');
    assert.equal(a.diagnosis?.suggested_fix, 'Change \\documentclass{altcv} on line 1 to \\documentclass{altacv}.');
    // Negative control: without the project's class, no installed class is one edit away.
    const plain = analyzeLog(missing, 'pdflatex', { source: src, catalog: null });
    assert.doesNotMatch(plain.diagnosis?.suggested_fix ?? '', /altacv/);
  });

  it('a misspelt package is corrected to the package the project brings', () => {
    const src = '\\documentclass{article}\n\\usepackage{mystle}\n\\begin{document}\nText.\n\\end{document}\n';
    const missing = "! LaTeX Error: File `mystle.sty' not found.\n\nType X to quit or <RETURN> to proceed,\nor enter new name. (Default extension: sty)\n\nEnter file name: \n./main.tex:2: Emergency stop.\n<read *> \n         \nl.2 \\usepackage\n";
    const a = analyzeLog(missing, 'pdflatex', { source: src, catalog: null, files: [file('mystyle.sty', '\\newcommand{\\mine}{}\n')] });
    assert.deepEqual([a.diagnosis?.error_class, a.diagnosis?.suggested_package, a.diagnosis?.suggested_fix], ['missing_package', 'mystyle', 'Change \\usepackage{mystle} on line 2 to \\usepackage{mystyle}.']);
    // Negative control: without the project's package there is nothing to correct it to.
    assert.equal(analyzeLog(missing, 'pdflatex', { source: src, catalog: null }).diagnosis?.suggested_package, undefined);
  });

  it('reads only what the document loads, and stays within its budgets', () => {
    const project = new Project([file('cv.cls', '\\RequirePackage{cvsty}\n\\newcommand{\\cvname}{}\n'), file('cvsty.sty', '\\newenvironment{cvitems}{}{}\n'), file('other.sty', '\\newcommand{\\unused}{}\n')]);
    const defs = project.definitions('\\documentclass{cv}\n');
    assert.deepEqual([[...defs.commands], [...defs.environments], [...defs.requires]], [['cvname'], ['cvitems'], ['cvsty']]);
    // Negative control: a project package the document does not load defines nothing for it.
    assert.equal(defs.commands.has('unused'), false);
    // A file pasted a hundred thousand times stops at the text budget (2 MB), not at memory.
    const big = new Project([file('part.tex', 'x'.repeat(100_000))]);
    const expanded = big.expand('\\input{part}\n'.repeat(100_000));
    assert.ok(expanded.length < 4 * 1024 * 1024, `expanded to ${expanded.length} characters`);
    assert.equal(big.includedAt('a\n\\input{part}\n', './part.tex'), 2);
    // A file over 512 KB is not read at all.
    assert.equal(new Project([file('huge.tex', 'y'.repeat(600 * 1024))]).text('huge.tex'), undefined);
  });
});
