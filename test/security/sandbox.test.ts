// The sandbox as a hostile document meets it: every writable place is capped or read-only
// (a job filling the root, /dev, /dev/shm or /tmp stops at the cap), the workspace cannot be
// flooded with files, and the production lualatex cannot make links or rename files.
// ordinary.test.ts checks that the documents that worked before still compile.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runSandboxed } from '../../src/tex/sandbox/sandboxed.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { afterRun, assertNoLeak, capturedLog, luaDocument, makeCanary, type Canary } from './attack.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const MB = 1024 * 1024;

describe('the sandbox under a hostile document', () => {
  let t: TestApp;
  let account: TestAccount;
  let canary: Canary;
  const logged = capturedLog();

  before(async () => {
    canary = makeCanary();
    t = await testApp({ log: logged.log });
    account = await createAccount(t.services, 'business');
  });
  after(async () => {
    await t.close();
    rmSync(canary.path, { force: true });
  });

  async function compile(latex: string, compiler: string) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex, compiler }, headers: account.headers });
    assertNoLeak(canary, { body: res.body, lines: logged.lines, dataDir: t.services.dataDir });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }

  async function pdfText(body: Record<string, unknown>): Promise<string> {
    const url = new URL(String(body.pdf_url));
    const res = await t.app.inject({ url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    return execFileSync('pdftotext', ['-', '-'], { input: res.rawPayload }).toString('utf8');
  }

  test('filling the root, /dev, /dev/shm and /tmp stops at once or at the /tmp cap', async () => {
    // 8 MB files (under the per-file limit) until a write fails; unbuffered, so it fails at once.
    const lua = String.raw`local chunk = string.rep("x", 1024 * 1024)
local function fill(dir)
  local total = 0
  for i = 1, 64 do
    local f = io.open(dir .. "/fill" .. i, "w")
    if not f then return total end
    f:setvbuf("no")
    for j = 1, 8 do
      if not f:write(chunk) then f:close() return total end
      total = total + #chunk
    end
    f:close()
  end
  return total
end
for _, dir in ipairs({"/", "/dev", "/dev/shm", "/usr", "/tmp"}) do
  tex.print("FILL[" .. dir .. "]=" .. fill(dir) .. ". ")
end`;
    const rss = process.memoryUsage().rss;
    const { status, body } = await compile(luaDocument(lua, ''), 'lualatex');
    assert.equal(status, 200, JSON.stringify(body).slice(0, 400));
    const text = (await pdfText(body)).replace(/\s+/g, '');
    for (const dir of ['/', '/dev', '/dev/shm', '/usr']) assert.match(text, new RegExp(`FILL\\[${dir}\\]=0\\.`), dir);
    // TeX Live 2026's LuaTeX opens files for writing only where openout_any allows (not /tmp);
    // an older one fills /tmp up to its cap.
    const tmp = Number(/FILL\[\/tmp\]=(\d+)\./.exec(text)?.[1]);
    assert.ok(tmp === 0 || (tmp > 128 * MB && tmp <= 256 * MB), `/tmp took ${tmp} bytes`);
    assert.ok(process.memoryUsage().rss - rss < 100 * MB, 'the service did not grow');
  });

  test('any process of the sandbox (not only TeX) fills /tmp only up to its 256 MB cap', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'quire-tmpcap-'));
    try {
      const limits = { cpuSeconds: 30, fileBytes: 512 * MB, memoryBytes: 1024 * MB, processes: 16 };
      const run = await runSandboxed({ workspace, env: {}, limits, isolate: true, root: defaultImageRoot() }, ['sh', '-c', 'head -c 400000000 /dev/zero > /tmp/fill; wc -c < /tmp/fill'], { timeoutMs: 60_000, maxOutput: 4096 });
      const filled = Number(run.stdout.toString('utf8').trim());
      assert.ok(filled > 128 * MB && filled <= 256 * MB, `/tmp took ${filled} bytes`);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  test('a document creating thousands of files is stopped', async () => {
    const lua = 'for i = 1, 12000 do local f = io.open("f" .. i, "w") if f then f:close() end end';
    const { status, body } = await compile(luaDocument(lua), 'lualatex');
    assert.equal(status, 422);
    assert.equal(body.error, 'compilation_failed');
    assert.match(String(body.message), /the document created more than 10000 files/);
  });

  test('lualatex cannot make links or rename files, even through require or package.loaded', async () => {
    // os.rename stays as a stand-in (LuaTeX-ja asks it whether a file exists): it answers a
    // rename onto itself and refuses every other, and no upvalue of it is the real function.
    const lua = `local l = require("lfs")
local function has(f) return f ~= nil and "yes" or "no" end
tex.print("LINK:" .. has(lfs.link) .. " SYMLINK:" .. has(lfs.symlink))
local f = io.open("r.txt", "w") f:write("r") f:close()
local moved = os.rename("r.txt", "moved.txt")
tex.print("RENAME:" .. tostring(moved) .. " KEPT:" .. tostring(lfs.attributes("r.txt") ~= nil and lfs.attributes("moved.txt") == nil))
tex.print("SELF:" .. tostring(os.rename("r.txt", "r.txt")) .. " ABSENT:" .. tostring(os.rename("none.txt", "none.txt")))
local leaked = "no"
local get = debug and debug.getupvalue
if get then for i = 1, 10 do local _, v = get(os.rename, i) if type(v) == "function" then leaked = "yes" end end end
tex.print("UPVALUE:" .. leaked)
tex.print("REQUIRED:" .. has(l.link) .. " LOADED:" .. has(package.loaded.lfs.link))
package.loaded.lfs = nil
local ok, again = pcall(require, "lfs")
tex.print("RELOADED:" .. has(ok and again and again.link or nil))
local made = pcall(function() return lfs.link(${JSON.stringify(canary.path)}, "main.log", true) end)
tex.print("MADE:" .. tostring(made))`;
    const { status, body } = await compile(luaDocument(lua, ''), 'lualatex');
    assert.equal(status, 200, JSON.stringify(body).slice(0, 400));
    const text = (await pdfText(body)).replace(/\s+/g, ' ');
    assert.match(text, /LINK:no SYMLINK:no/);
    assert.match(text, /RENAME:nil KEPT:true/);
    assert.match(text, /SELF:true ABSENT:nil/);
    assert.match(text, /UPVALUE:no/);
    assert.match(text, /REQUIRED:no LOADED:no/);
    assert.match(text, /RELOADED:no/);
    assert.match(text, /MADE:false/);
  });

  test('a directory in place of main.pdf is refused under the production runner too', async () => {
    const { status, body } = await compile(luaDocument(afterRun(`os.remove("main.pdf") lfs.mkdir("main.pdf")`)), 'lualatex');
    assert.equal(status, 422);
    assert.equal(body.error, 'compilation_failed');
    assert.match(String(body.message), /main\.pdf is a directory/);
  });
});
