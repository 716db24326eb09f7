// TeX Live's restricted shell escape as a hostile document meets it (job.ts SHELL_ESCAPE): the
// listed programs run (the canary that an attack would have been seen), everything else stays
// refused on every engine — \write18, \immediate\write18, \input|"…", shell syntax smuggled
// into a listed program's arguments, and lualatex's os.execute, io.popen and os.spawn. Each
// payload would leave a mark (a file, the product 42 of a shell's arithmetic) that is checked
// inside the sandbox, in the PDF, in the log and on the host.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Compiler } from '../../src/tex/compilers.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import { TexRunner } from '../../src/tex/runner.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { text } from '../tex/support.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

// Below the slot uid range and CONVERTER_UID, as in test/tex/runner.test.ts.
const UID = process.getuid?.() === 0 ? CONVERTER_UID - 2 : undefined;
const MB = 1024 * 1024;
const ENGINES: readonly Compiler[] = ['pdflatex', 'xelatex', 'lualatex'];
const PASSWD = /root:x:0:0|nobody:x:/;
/** What a shell would print for `QUIRE$((6*7))`: the command line itself never holds it. */
const RAN = /QUIRE42/;

// shellesc gives lualatex its \write18 (LuaTeX has no such primitive); the others load it too.
const doc = (body: string) => `\\documentclass{article}\n\\usepackage{shellesc}\n\\begin{document}\n${body}\n\\end{document}\n`;
/** Typesets MARK:<name> when the file exists in the workspace. */
const mark = (name: string) => `\\IfFileExists{${name}}{MARK:${name}}{}`;

describe('restricted shell escape under a hostile document', () => {
  let workRoot: string;
  let runner: TexRunner;
  const host = join(tmpdir(), `quire-shell-${process.pid}`);
  const run = (source: string, compiler: Compiler) => runner.run({ source, compiler, timeoutMs: 60_000, maxFileBytes: 8 * MB }, UID);

  before(async () => {
    workRoot = await mkdtemp(join(tmpdir(), 'quire-jobs-'));
    runner = new TexRunner({ workRoot, isolate: true, root: defaultImageRoot(), luaCache: () => prepareLuaCache(workRoot, defaultImageRoot()) });
  });
  after(async () => {
    await runner.close();
    await rm(workRoot, { recursive: true, force: true });
    await rm(host, { force: true });
  });

  test('a listed program runs (kpsewhich through \\write18 and \\input|): restricted shell escape is on', async () => {
    for (const compiler of ENGINES) {
      const result = await run(doc('\\immediate\\write18{kpsewhich -var-value=openout_any}\n[\\input|"kpsewhich article.cls" ]'), compiler);
      assert.equal(result.outcome, 'ok', `${compiler}: ${result.log.slice(-600)}`);
      assert.match(text(result.pdf), /texmf-dist\/tex\/latex\/base\/article\.cls/, compiler);
    }
  });

  test('\\write18{touch /tmp/x}, \\immediate\\write18{cat /etc/passwd} and others off the list do not run', async () => {
    const body = [
      `\\write18{touch /tmp/x}\\write18{touch ${host}}\\write18{touch shipout.txt}`,
      '\\immediate\\write18{cat /etc/passwd}',
      '\\immediate\\write18{cat /etc/passwd > passwd.txt}',
      '\\immediate\\write18{sh -c "echo QUIRE$((6*7)) > ran.tex"}',
      '\\ShellEscape{touch shellesc.txt}',
      'x\\newpage y',
      '\\directlua{}', // replaced below for lualatex: the sandbox's own /tmp is looked at from inside
    ].join('\n');
    for (const compiler of ENGINES) {
      const inside = compiler === 'lualatex' ? '\\directlua{tex.print(lfs.attributes("/tmp/x") and "MARK:/tmp/x" or "")}' : '';
      const result = await run(doc(`${body.replace('\\directlua{}', inside)}\n${['shipout.txt', 'passwd.txt', 'ran.tex', 'shellesc.txt'].map(mark).join('')}END`), compiler);
      assert.equal(result.outcome, 'ok', `${compiler}: ${result.log.slice(-600)}`);
      const out = text(result.pdf);
      assert.match(out, /END/, compiler);
      assert.doesNotMatch(out, /MARK:/, `${compiler}: a payload left its file`);
      assert.doesNotMatch(out + result.log, PASSWD, compiler);
      assert.doesNotMatch(out + result.log, RAN, compiler);
      assert.equal(existsSync(host), false, `${compiler}: the host's ${host}`);
      // Each was refused by name (pdfTeX and XeTeX: "disabled (restricted)"; LuaTeX's shellesc: "Command execution disabled").
      for (const command of ['touch /tmp/x', 'cat /etc/passwd', 'touch shipout.txt']) {
        assert.match(result.log, new RegExp(`runsystem\\(${command.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)\\.\\.\\.(disabled \\(restricted\\)|\\(Command execution disabled)`), `${compiler}: ${command}`);
      }
    }
  });

  test('\\input|"ls" and \\input|"echo …" are refused', async () => {
    for (const compiler of ENGINES) {
      for (const pipe of ['ls', 'echo QUIRE$((6*7))']) {
        const result = await run(doc(`\\input|"${pipe}"`), compiler);
        assert.equal(result.outcome, 'failed', compiler);
        assert.match(result.log, /I can't find file `"?\|/, compiler);
        assert.doesNotMatch(result.log, RAN, compiler);
        // ls in the workspace would have listed the recorder's file.
        assert.doesNotMatch(result.log, /^main\.fls$/m, compiler);
      }
    }
  });

  test('shell syntax in a listed program\'s arguments is quoted, never run', async () => {
    const payloads = ['kpsewhich article.cls; touch semi.txt', 'kpsewhich `touch tick.txt`', 'kpsewhich $(touch dollar.txt)', 'kpsewhich article.cls && touch and.txt', 'kpsewhich x | touch pipe.txt', 'kpsewhich QUIRE$((6*7)) > arith.tex'];
    const files = ['semi.txt', 'tick.txt', 'dollar.txt', 'and.txt', 'pipe.txt'];
    for (const compiler of ENGINES) {
      const result = await run(doc(`${payloads.map((p) => `\\immediate\\write18{${p}}`).join('\n')}\n${files.map(mark).join('')}\\IfFileExists{arith.tex}{\\input{arith.tex}}{}END`), compiler);
      assert.equal(result.outcome, 'ok', `${compiler}: ${result.log.slice(-600)}`);
      const out = text(result.pdf);
      assert.doesNotMatch(out, /MARK:/, compiler);
      assert.doesNotMatch(out + result.log, RAN, compiler);
    }
  });

  test("lualatex's os.execute, io.popen and os.spawn run nothing off the list", async () => {
    const lua = String.raw`\begin{filecontents*}[overwrite]{probe.lua}
local function say(s) tex.sprint(-2, s .. " ") end
local ok, r = pcall(os.execute, "touch exec.txt")
say("EXEC:" .. tostring(ok and r))
local ok2, p = pcall(io.popen, "echo QUIRE$((6*7))")
say("POPEN:" .. tostring(ok2 and p ~= nil) .. ":" .. tostring(p and p:read("*a")))
local ok3, s = pcall(function() return os.spawn({"touch", "spawn.txt"}) end)
say("SPAWN:" .. tostring(ok3 and s))
local ok4, e = pcall(os.execute, "kpsewhich article.cls; touch listed.txt")
local k = io.popen("kpsewhich article.cls")
say("LISTED:" .. tostring(k and k:read("*l")))
for _, name in ipairs({"exec.txt", "spawn.txt", "listed.txt", "/tmp/x"}) do
  if lfs.attributes(name) then say("MARK:" .. name) end
end
\end{filecontents*}
`;
    const result = await run(`${lua}\\documentclass{article}\n\\begin{document}\n\\directlua{dofile("probe.lua")}END\n\\end{document}\n`, 'lualatex');
    assert.equal(result.outcome, 'ok', result.log.slice(-600));
    // pdftotext may break the path after a hyphen.
    const out = text(result.pdf).replace(/\s+/g, ' ').replace(/- /g, '-');
    assert.match(out, /LISTED:\/usr\/share\/texlive\/texmf-dist\/tex\/latex\/base\/article\.cls/, 'the listed program ran');
    assert.match(out, /EXEC:nil/);
    assert.match(out, /POPEN:false:nil/);
    assert.match(out, /SPAWN:nil/);
    assert.doesNotMatch(out, /MARK:/);
    assert.doesNotMatch(out + result.log, RAN);
  });
});
