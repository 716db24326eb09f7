import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findViolation, SECURITY_RULES } from '../../src/templates/security.js';

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
  ],
};

// The bypass families of issue 13, each with the rule it must land on: the same payloads are
// sent through the HTTP API in test/security/templates-policy.test.ts.
export const BYPASSES: Array<{ family: string; body: string; rule: string }> = [
  // Case tricks: \lowercase and \uppercase turn any spelling into any other.
  { family: 'case', body: '\\lowercase{\\csname WRITE\\endcsname}18{ls}', rule: 'indirect_command' },
  { family: 'case', body: '\\lowercase{\\usepackage{SHELLESC}}', rule: 'shell_escape_package' },
  { family: 'case', body: '\\uppercase{\\csname input\\endcsname}{/etc/passwd}', rule: 'indirect_command' },
  { family: 'case', body: '\\lowercase{\\csname SCANTOKENS\\endcsname}{x}', rule: 'indirect_command' },
  { family: 'case', body: '\\lowercase{\\usetikzlibrary{EXTERNAL}}', rule: 'tikz_externalize' },
  { family: 'case', body: '\\lowercase{\\begin{FILECONTENTS}{x.tex}}', rule: 'file_write' },
  { family: 'case', body: '\\lccode`X=`w \\lowercase{\\csname XRITE\\endcsname}18{ls}', rule: 'catcode_change' },
  // File reads around the path rule.
  { family: 'file', body: '\\CatchFileDef{\\x}{/etc/passwd}{}', rule: 'file_read' },
  { family: 'file', body: '\\makeatletter\\def\\input@path{{/etc/}}\\makeatother', rule: 'unsafe_path' },
  { family: 'file', body: '\\csname input@path\\endcsname', rule: 'indirect_command' },
  { family: 'file', body: '\\input{{/etc}/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\input {{/etc}/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\input{{}/etc/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\input{%\n/etc/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\input{"/etc/passwd"}', rule: 'unsafe_path' },
  { family: 'file', body: '\\graphicspath{{./img/}{/etc/}}', rule: 'unsafe_path' },
  { family: 'file', body: '\\def\\p{/etc/passwd}\\input{\\p}', rule: 'unsafe_path' },
  { family: 'file', body: '\\newcommand\\inc[1]{\\input{#1}}', rule: 'unsafe_path' },
  { family: 'file', body: '\\def\\x{\\includegraphics}', rule: 'indirect_command' },
  { family: 'file', body: '\\DTLloaddb{db}{/etc/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\embedfile{/etc/passwd}', rule: 'unsafe_path' },
  { family: 'file', body: '\\special{pdf:fstream @x (/etc/passwd)}', rule: 'file_read' },
  // Links and raw PDF in any spelling.
  { family: 'link', body: '\\href{\\detokenize{javascript:alert(1)}}{x}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\href{\\string javascript:alert(1)}{x}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\href{ JavaScript :alert(1)}{x}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\def\\j{javascript}\\href{\\j:alert(1)}{x}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\url|javascript:alert(1)|', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\href{evil.exe}{x}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\pdfannot{/A << /S /Java#53cript /JS (app.alert(1)) >>}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\pdfannot{/A << /S /L#61unch /F (calc) >>}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\pdfannot{/A << /S /URI /URI (\\string\\152avascript:alert(1)) >>}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\pdfannot{/A << /S /URI /URI <6a6176617363726970743a616c657274283129> >>}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\def\\js{JavaScript}\\pdfannot{/A << /S /\\js >>}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\hypersetup{pdfopenaction={/S/Java#53cript/JS(app.alert(1))}}', rule: 'unsafe_link_action' },
  { family: 'link', body: '\\begin{Form}\\PushButton[onclick={app.alert(1)}]{x}\\end{Form}', rule: 'unsafe_link_action' },
  // Re-tokenising, code hidden in macros, aliased Lua libraries.
  { family: 'retokenize', body: '\\scantokens{\\x}', rule: 'retokenize' },
  { family: 'retokenize', body: '\\csname scantokens\\endcsname{x}', rule: 'indirect_command' },
  { family: 'retokenize', body: '\\csname iow_open:Nn\\endcsname', rule: 'indirect_command' },
  { family: 'retokenize', body: '\\UseName{sys_shell_now:n}{ls}', rule: 'indirect_command' },
  { family: 'retokenize', body: '\\makeatletter\\scantokens@x', rule: 'retokenize' },
  { family: 'lua', body: '\\def\\mymacro{os.execute("ls")}\\directlua{\\mymacro}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\newtoks\\t \\directlua{\\the\\t}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\directlua{local l = lfs; l.link("/etc/passwd", "x")}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\directlua{local t = tex; t.scantoks(0, "x")}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\lowercase{\\directlua{OS.EXECUTE("ls")}}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\directlua{local a = "te18{ls}" local b = "\\string\\\\wri" tex.print(b .. a)}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\directlua{tex.print(string["char"](92) .. "input{/etc/passwd}")}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\directlua{callback.register("find_read_file", function() end)}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\begin{luacode*}\nlocal p = pdf\n\\end{luacode*}', rule: 'dangerous_lua' },
  { family: 'lua', body: '\\def\\x{\\directlua}', rule: 'dangerous_lua' },
  // Aliases.
  { family: 'alias', body: '\\NewCommandCopy\\x\\input', rule: 'indirect_command' },
  { family: 'alias', body: '\\def\\x{\\input}', rule: 'indirect_command' },
];

const ALLOWED = [
  '\\lowercase{\\def\\x{Hello}}\\MakeUppercase{ {{- name -}} }',
  '\\href{mailto:{{ email }}}{ {{- email -}} }\n\\href{ {{- website -}} }{site}\n\\url{https://example.com/a_b?x=1\\#top}',
  '\\newcommand\\email[1]{\\href{mailto:#1}{#1}}\n\\href{\\#sec}{back}',
  '\\usepackage{amsmath, % maths\n  graphicx}\n\\graphicspath{{./img/}{figures/}}',
  '\\includegraphics[height=16mm,width=\\linewidth,keepaspectratio]{ {{- logo | asset -}} }',
  '\\begin{luacode*}\nlocal s = "a\\nb"\ntex.print(s)\n\\end{luacode*}',
  '\\directlua{tex.print(tex.getcount("c@page") + 1)}',
  '\\hypersetup{colorlinks=true, pdftitle={Invoice}, pdfauthor={ {{- name -}} }}',
  '\\pdfannot width 1pt height 1pt {/Subtype /Text /Contents (note)}',

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
