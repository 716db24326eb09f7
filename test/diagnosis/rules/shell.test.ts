// Documents that need unrestricted shell escape (src/tex/diagnosis/rules/shell.ts), from the
// lines of real TeX Live 2026 logs (restricted shell escape) written out: the refused command,
// the package that could not run its program, and what to do instead. An unrelated error after
// a refusal keeps its own diagnosis. test/compile/shell-escape.test.ts runs the same documents.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { analyzeLog } from '../../../src/tex/diagnosis/index.js';
import { RESTRICTED_PROGRAMS } from '../../../src/tex/diagnosis/rules/index.js';
import { defaultImageRoot } from '../../../src/tex/image/default.js';

const doc = (preamble: string, body: string) => `\\documentclass{article}\n${preamble}\n\\begin{document}\n${body}\n\\end{document}\n`;
const LIST = `TeX Live's restricted list (${RESTRICTED_PROGRAMS.join(', ')})`;

describe('a document that needs unrestricted shell escape', () => {
  it('RESTRICTED_PROGRAMS is the image texmf.cnf\'s shell_escape_commands', () => {
    const image = defaultImageRoot();
    const cnf = `${image ?? ''}/usr/share/texlive/texmf-dist/web2c/texmf.cnf`;
    const text = execFileSync('cat', [cnf], { encoding: 'utf8' });
    const list = /^shell_escape_commands = \\\n((?:.*\\\n)+)/m.exec(text)?.[1];
    assert.ok(list, 'the list is in texmf.cnf');
    assert.deepEqual(list.replace(/\\\n/g, '').split(',').filter(Boolean), [...RESTRICTED_PROGRAMS]);
    assert.match(text, /^shell_escape = p$/m);
  });

  it('epstopdf through \\write18: refused, the figure is missing, repstopdf is the fix', () => {
    const source = doc('\\usepackage{graphicx}\n\\immediate\\write18{epstopdf fig.eps}', 'Figure: \\includegraphics{fig.pdf}');
    const log = [
      'runsystem(epstopdf fig.eps)...disabled (restricted).',
      '',
      "./main.tex:6: Package pdftex.def Error: File `fig.pdf' not found: using draft setting.",
      '',
      'l.6 Figure: \\includegraphics{fig.pdf}',
      '',
    ].join('\n');
    assert.deepEqual(analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis, {
      error_class: 'fatal_error',
      summary: `The document needs unrestricted shell escape: "epstopdf fig.eps" on line 3 was refused. Only ${LIST} runs here.`,
      suggested_fix: 'Change "epstopdf" to "repstopdf" on line 3 (TeX Live\'s restricted epstopdf, which runs here), or drop the call and write \\includegraphics{fig.eps} (an EPS asset is converted here).',
      symbol: 'epstopdf fig.eps',
      line: 3,
      retryable: true,
    });
  });

  it("lualatex's shellesc words for the same refusal", () => {
    const source = doc('\\usepackage{graphicx,shellesc}\n\\immediate\\write18{epstopdf fig.eps}', 'Figure: \\includegraphics{fig.pdf}');
    const log = [
      "runsystem(epstopdf fig.eps)...(Command execution disabled via shell_escape='p').",
      "./main.tex:6: Package luatex.def Error: File `fig.pdf' not found: using draft setting.",
      'l.6 Figure: \\includegraphics{fig.pdf}',
      '',
    ].join('\n');
    const a = analyzeLog(log, 'lualatex', { source, catalog: null });
    assert.deepEqual([a.diagnosis?.symbol, a.diagnosis?.line], ['epstopdf fig.eps', 3]);
    assert.match(a.agent_hint, /^Change "epstopdf" to "repstopdf" on line 3 .* and compile again\.$/);
  });

  it("xelatex's words for the missing figure", () => {
    const source = doc('\\usepackage{graphicx}\n\\immediate\\write18{epstopdf fig.eps}', 'Figure: \\includegraphics{fig.pdf}');
    const log = "runsystem(epstopdf fig.eps)...disabled (restricted).\n./main.tex:6: Unable to load picture or PDF file 'fig.pdf'.\nl.6 Figure: \\includegraphics{fig.pdf}\n";
    const d = analyzeLog(log, 'xelatex', { source, catalog: null }).diagnosis;
    assert.deepEqual([d?.error_class, d?.symbol, d?.line], ['fatal_error', 'epstopdf fig.eps', 3]);
  });

  it('\\input|"ls": the pipe is refused', () => {
    const source = doc('', '\\input|"ls -la"');
    const log = './main.tex:4: I can\'t find file `"|ls -la"\'.\nl.4 \\input|"ls -la"\n\n*** (job aborted, file error in nonstop mode)\n';
    const d = analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis;
    assert.equal(d?.summary, `The document needs unrestricted shell escape: "ls -la" on line 4 was refused. Only ${LIST} runs here.`);
    assert.equal(d?.suggested_fix, 'Replace \\input|"ls -la" on line 4 with the file its output would be, sent as an asset.');
  });

  it('minted 2 asks for -shell-escape: load minted 3', () => {
    const source = doc('\\usepackage{minted2}', '\\begin{minted}{python}\nx = 1\n\\end{minted}');
    const log = [
      'runsystem(mkdir -p _minted-main)...disabled (restricted).',
      './main.tex:4: Package minted Error: You must invoke LaTeX with the -shell-escape flag.',
      'l.4 \\begin',
      '',
    ].join('\n');
    const d = analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis;
    assert.equal(d?.summary, `The document needs unrestricted shell escape: the package minted on line 2 could not run its program. Only ${LIST} runs here.`);
    assert.equal(d?.suggested_fix, 'Load minted 3 with \\usepackage{minted} on line 2 (not minted2 or minted1): its latexminted is on TeX Live\'s restricted list and runs here.');
    assert.equal(d?.symbol, 'minted');
  });

  it('svg warned it could not run Inkscape: \\includegraphics of the SVG asset', () => {
    const source = doc('\\usepackage{svg}', '\\includesvg{pic}');
    const log = [
      "Package svg Warning: You didn't enable `shell escape' (or `write18')",
      '(svg)                so Inkscape export won\'t work on input line 4.',
      "./main.tex:4: Package svg Error: File `pic_svg-tex.pdf' is missing.",
      'l.4 \\includesvg{pic}',
      '',
    ].join('\n');
    const d = analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis;
    assert.deepEqual([d?.symbol, d?.line, d?.suggested_fix], ['svg', 4, 'Write \\includegraphics{pic.svg} instead of \\includesvg on line 4 (an SVG asset is converted here).']);
  });

  it('TikZ externalisation: its second pdflatex is refused', () => {
    const source = doc('\\usepackage{tikz}\n\\usetikzlibrary{external}\n\\tikzexternalize', '\\begin{tikzpicture}\\draw (0,0) -- (1,1);\\end{tikzpicture}');
    const call = 'pdflatex -halt-on-error -interaction=batchmode -jobname "main-figure0" "\\def\\tikzexternalrealjob{main}\\input{main}"';
    const log = [
      `runsystem(${call})...disabled (restricted).`,
      `./main.tex:6: Package tikz Error: Sorry, the system call '${call}' did NOT result in a usable output file 'main-figure0' (expected one of .pdf:.jpg:.jpeg:.png:). Please verify that you have enabled system calls. For pdflatex, this is 'pdflatex -shell-escape'.`,
      'l.6 \\begin{tikzpicture}',
      '',
    ].join('\n');
    const d = analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis;
    assert.deepEqual([d?.symbol, d?.line], [call, 4]);
    assert.equal(d?.suggested_fix, 'Remove \\tikzexternalize on line 4 (the pictures are then typeset with the document), or send the externalised figures as assets.');
  });

  it('gnuplottex wrote no page and no error: its warning is the diagnosis', () => {
    const source = doc('\\usepackage{gnuplottex}', '\\begin{gnuplot}\nplot sin(x)\n\\end{gnuplot}');
    const log = [
      'runsystem(touch w18-test-20261241336.tex)...disabled (restricted).',
      'Package gnuplottex Warning: Shell escape not enabled.',
      "(gnuplottex)                You'll need to convert the graphs yourself.",
      'No pages of output.',
      '',
    ].join('\n');
    const a = analyzeLog(log, 'pdflatex', { source, catalog: null });
    assert.deepEqual([a.diagnosis?.symbol, a.diagnosis?.line, a.line], ['gnuplottex', 2, 2]);
    assert.match(a.diagnosis?.suggested_fix ?? '', /^Make the files the package gnuplottex needs yourself and send them as assets, or use a program of TeX Live's restricted list/);
  });

  it('an unrelated error after a refused command keeps its own diagnosis', () => {
    const source = doc('', '\\immediate\\write18{touch x.txt}\n\\foo');
    const log = 'runsystem(touch x.txt)...disabled (restricted).\n./main.tex:5: Undefined control sequence.\nl.5 \\foo\n\n';
    const d = analyzeLog(log, 'pdflatex', { source, catalog: null }).diagnosis;
    assert.equal(d?.error_class, 'undefined_command');
    assert.equal(d?.symbol, '\\foo');
  });
});
