import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findViolation, SECURITY_RULES } from '../../src/templates/security.js';
import { BYPASSES } from './bypasses.js';

const doc = (body: string) => `\\documentclass{article}\n${body}\n\\begin{document}\nHi\n\\end{document}\n`;

// Each rule with sources that must be refused (the offending line is line 2 of doc()).
const REFUSED: Record<string, string[]> = {
  shell_escape: ['\\immediate\\write18{rm -rf /}', '\\write 18{ls}', '\\ShellEscape{ls}', '\\def\\w{\\write}'],
  file_write: ['\\newwrite\\f', '\\immediate\\openout5=x.tex', '\\begin{filecontents}{x.tex}'],
  file_read: ['\\openin5=main.log', '\\read5 to \\x', '\\readline5 to \\x', '\\newread\\r', '\\pdfximage width 1cm {/etc/passwd}', '\\immediate\\pdfobj stream file {x.log}'],
  unsafe_path: [
    '\\input{/etc/passwd}',
    '\\input /etc/passwd',
    '\\include{../secret}',
    '\\includegraphics[width=2cm]{~/photo.png}',
    '\\lstinputlisting{C:/x.txt}',
    '\\graphicspath{{/var/}}',
    '\\usepackage{../../evil}',
    '\\input{\\string/etc/passwd}',
  ],
  pipe_input: ['\\input|"ls -la"', '\\input{|ls}', '\\includegraphics{|cat x}'],
  shell_escape_package: ['\\usepackage{minted}', '\\usepackage[cache=false]{pythontex}', '\\usepackage{amsmath,shellesc}', '\\RequirePackage{svg}', '\\usepackage{auto-pst-pdf}'],
  tikz_externalize: ['\\usetikzlibrary{calc,external}', '\\tikzexternalize', '\\usepgfplotslibrary{external}'],
  catcode_change: ['\\catcode`\\@=11', '\\ExplSyntaxOn'],
  retokenize: ['\\scantokens{\\x}', '\\everyeof{\\noexpand}', '\\endlinechar=-1'],
  dangerous_lua: [
    '\\directlua{os.execute("ls")}',
    '\\directlua{local f = io.open("/etc/passwd")}',
    '\\directlua{require("socket")}',
    '\\directlua{ load("x")() }',
    '\\latelua{debug.getinfo(1)}',
    '\\begin{luacode}\nlocal p = package.loaded\n\\end{luacode}',
    '\\directlua{tex.print("\\\\wri" .. "te18{ls}")}',
    '\\directlua{tex.print("\\092input|ls")}',
    '\\directlua{tex.print(string.reverse("81etirw"))}',
    '\\directlua{token.put_next(token.create("write"))}',
  ],
  file_probe: ['\\pdffiledump{main.log}', '\\pdfmdfivesum file {x}', '\\pdffilesize{x}', '\\filedump{x}'],
  unsafe_link_action: [
    '\\href{javascript:alert(1)}{x}',
    '\\href{file:///etc/passwd}{x}',
    '\\url{run:calc.exe}',
    '\\pdfannot{/A << /S /Launch /F (calc) >>}',
    '\\special{pdf: /JavaScript}',
  ],
  liquid_file_tags: ['{% include "header" %}', '{%- render "x" -%}', '{% layout "base" %}', '{% liquid\n include "x" %}'],
  indirect_command: [
    '\\csname write\\endcsname18{ls}',
    '\\csname im mediate\\endcsname',
    '\\csname\\string i nput\\endcsname{x}',
    '\\let\\x\\input',
    '\\let\\x=\\catcode',
    '\\wri^^74e18{ls}',
    '\\@nameuse{openout}',
    '\\expandafter\\x\\csname cat#1\\endcsname',
    '\\includegraphics[alt={a ] b},width=1cm]\\jobname',
  ],
};

const ALLOWED = [
  '\\lowercase{\\def\\x{Hello}}\\MakeUppercase{ {{- name -}} }',
  '\\href{mailto:{{ email }}}{ {{- email -}} }\n\\href{ {{- website -}} }{site}\n\\url{https://example.com/a_b?x=1\\#top}',
  '\\newcommand\\email[1]{\\href{mailto:#1}{#1}}\n\\href{\\#sec}{back}',
  '\\usepackage{amsmath, % maths\n  graphicx}\n\\graphicspath{{./img/}{figures/}}',
  '\\includegraphics[height=16mm,width=\\linewidth,keepaspectratio]{ {{- logo | asset -}} }',
  // A long alt text (from data) and a `]` inside braces do not hide the file argument (issue 40).
  `\\includegraphics[alt={${'A chart [2026] of revenue by quarter, '.repeat(8)}},width=3cm]{chart.png}`,
  '\\begin{luacode*}\nlocal s = "a\\nb"\ntex.print(s)\n\\end{luacode*}',
  '\\directlua{tex.print(tex.getcount("c@page") + 1)}',
  '\\hypersetup{colorlinks=true, pdftitle={Invoice}, pdfauthor={ {{- name -}} }}',
  '\\pdfannot width 1pt height 1pt {/Subtype /Text /Contents (note)}',
  '\\hyperref[sec:intro]{the introduction} \\write16 {note}\\immediate\\write-1{x}',
  // Names that are also Object.prototype keys are ordinary names.
  '\\newcommand\\constructor{x}\\constructor \\def\\valueOf{y}',

  '\\usepackage[T1]{fontenc}\n\\usepackage{graphicx,xcolor}\n\\usepackage{tikz}\n\\usetikzlibrary{calc,positioning}',
  '\\newcommand{\\name}[1]{\\textbf{#1}}\n\\def\\x#1{%\n#1}',
  '\\input{chapter1}\n\\include{sections/intro}\n\\includegraphics[width=3cm]{logo.png}',
  '\\href{https://example.com}{site}\n\\url{mailto:a@b.c}',
  '\\immediate\\write16{hello}\n\\write-1{x}',
  '\\makeatletter\n\\renewcommand\\@seccntformat[1]{}\n\\makeatother',
  '\\directlua{tex.print("hello " .. 1 + 1)}',
  '\\expandafter\\def\\csname foo#1\\endcsname{x}',
  '\\begin{tabular}{|l|c|}\\hline a & b\\end{tabular}',
  'Text mentioning /JavaScript and /Launch is only text.',
  '{{ name }} {% if paid %}PAID{% endif %} {% for i in items %}{{ i.x }}{% endfor %}',
];

describe('security policy', () => {
  it('names 14 rules', () => {
    assert.equal(SECURITY_RULES.length, 14);
    assert.deepEqual(
      SECURITY_RULES.map((r) => r.number),
      Array.from({ length: 14 }, (_, i) => i + 1),
    );
    assert.deepEqual(Object.keys(REFUSED).sort(), SECURITY_RULES.map((r) => r.id).sort());
  });

  for (const rule of SECURITY_RULES) {
    it(`rule ${rule.number} (${rule.id}) refuses each example with its rule and line`, () => {
      for (const body of REFUSED[rule.id]!) {
        const found = findViolation(doc(body));
        assert.ok(found, `expected a violation for ${JSON.stringify(body)}`);
        assert.equal(found.rule, rule.id, `${JSON.stringify(body)}: ${found.message}`);
        assert.equal(found.rule_number, rule.number);
        assert.equal(found.line, 2, `${JSON.stringify(body)}: line`);
        assert.match(found.message, new RegExp(`^Line 2: .*rule ${rule.number}: ${rule.id}`));
      }
    });
  }

  it('stays fast on hostile sources (no quadratic scans)', () => {
    for (const unit of ['\\includegraphics[', '\\csname x', '{% liquid ', '\\usepackage{', '{a', '\\begin{luacode}']) {
      const started = performance.now();
      findViolation(unit.repeat(Math.ceil(300_000 / unit.length)));
      assert.ok(performance.now() - started < 2000, `${unit}: ${Math.round(performance.now() - started)} ms`);
    }
  });

  it('refuses every bypass family on the normalised view, with the right rule', () => {
    for (const { family, body, rule } of BYPASSES) {
      const found = findViolation(doc(body));
      assert.ok(found, `${family}: expected a violation for ${JSON.stringify(body)}`);
      assert.equal(found.rule, rule, `${family}: ${JSON.stringify(body)}: ${found.message}`);
    }
  });

  it('judges a rendered document as it stands: a link target from a placeholder is decided at render', () => {
    const source = doc('\\href{ {{- site -}} }{x}');
    assert.equal(findViolation(source), null);
    assert.equal(findViolation(doc('\\href{evil.exe}{x}'), { rendered: true })?.rule, 'unsafe_link_action');
    assert.equal(findViolation(doc('\\href{https://example.com}{x}'), { rendered: true }), null);
  });

  it('lets ordinary LaTeX and Liquid through', () => {
    for (const body of ALLOWED) assert.equal(findViolation(doc(body)), null, body);
  });
});
