// The client commands as `npx quire` runs them: bin/quire.js and the bundle it loads for
// them (dist/cli/client.js, scripts/build-cli.mjs: light Fetch classes, node:http, no undici),
// against a real server with real TeX behind a recording proxy, so each test sees the requests
// the command made: a one-pager in one round trip (the PDF in the compile's answer), a
// document whose success body is too large for a header through the signed link instead,
// refusals, an unreachable server, a non-Quire server, login, and a watch cycle.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAccount, HELLO, type TestAccount } from '../helpers.js';
import { freshHome, project, quire, ROOT, type Run, type Server, startServer } from './client-helpers.js';

const BIN = join(ROOT, 'bin', 'quire.js');
const MANY_WARNINGS = `\\documentclass{article}\n\\begin{document}\n${Array.from({ length: 60 }, (_, i) => `See \\ref{a-rather-long-label-name-that-makes-the-warning-longer-${i}}.`).join('\n')}\n\\end{document}\n`;

/** A proxy in front of `target` that records "METHOD /path" of every request. */
async function recordingProxy(target: string): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const to = new URL(target);
  const proxy: HttpServer = createServer((req, res) => {
    seen.push(`${req.method} ${req.url!.split('?')[0]}`);
    const out = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => proxy.close(() => resolve())),
  };
}

describe('bin/quire.js runs the bundled client commands', () => {
  let server: Server;
  let pro: TestAccount;
  let home: string;
  let cleanHome: () => Promise<void>;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  const dirs: string[] = [];
  const folder = async (files: Record<string, string>) => {
    const dir = await project(files);
    dirs.push(dir);
    return dir;
  };
  const run = (args: string[]): Promise<Run> => quire(args, { home, command: [BIN] });

  before(async () => {
    server = await startServer();
    pro = await createAccount(server.services, 'pro');
    ({ home, cleanup: cleanHome } = await freshHome());
    proxy = await recordingProxy(server.url);
    // Built and fresh, as setup.sh leaves it (a stale bundle is rebuilt here, once).
    const r = await run(['compile', '--help']);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await proxy.close();
    await server.close();
    await cleanHome();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a one-pager: one request, the PDF in its answer, written where it belongs', async () => {
    const dir = await folder({ 'main.tex': HELLO });
    proxy.seen.length = 0;
    const r = await run(['compile', dir, '--server', proxy.url, '--key', pro.key]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote .*main\.pdf: 1 page, [\d.]+ s on the server, [\d.]+ s end to end \(pro: 1\/2000 this month\)\n$/);
    assert.deepEqual(proxy.seen, ['POST /api/v1/compile']);
    const pdf = await readFile(join(dir, 'main.pdf'));
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  });

  test('a success body too large for a header: the JSON answer, then the PDF through its signed link; --json prints the body', async () => {
    const dir = await folder({ 'main.tex': MANY_WARNINGS });
    proxy.seen.length = 0;
    const r = await run(['compile', dir, '--server', proxy.url, '--key', pro.key, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(proxy.seen.length, 2);
    assert.equal(proxy.seen[0], 'POST /api/v1/compile');
    assert.match(proxy.seen[1]!, /^GET \/api\/v1\/pdfs\/[0-9a-f-]{36}$/);
    const body = JSON.parse(r.stdout) as { pages: number; warnings: unknown[] };
    assert.equal(body.pages, 1);
    assert.equal(body.warnings.length, 50);
    assert.equal((await readFile(join(dir, 'main.pdf'))).subarray(0, 5).toString('latin1'), '%PDF-');
  });

  test('a broken document exits 1 with the diagnosis; a bad key exits 2; nothing is written', async () => {
    const dir = await folder({ 'main.tex': '\\documentclass{article}\n\\begin{document}\n\\undefinedthing\n\\end{document}\n' });
    const broken = await run(['compile', dir, '--server', proxy.url, '--key', pro.key]);
    assert.equal(broken.code, 1, broken.stderr);
    assert.match(broken.stderr, /main\.tex:3: /);
    const badKey = await run(['compile', dir, '--server', proxy.url, '--key', 'svc_not_a_key']);
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /\(invalid_api_key\)/);
    await assert.rejects(readFile(join(dir, 'main.pdf')), { code: 'ENOENT' });
  });

  test('no server, or a server that is not Quire: exit 2 and what to do', async () => {
    const dir = await folder({ 'main.tex': HELLO });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const none = await run(['compile', dir, '--server', `http://127.0.0.1:${port}`, '--key', pro.key]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, new RegExp(`cannot reach the Quire server at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));

    const html = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'));
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
    try {
      const other = await run(['compile', dir, '--server', `http://127.0.0.1:${(html.address() as AddressInfo).port}`, '--key', pro.key]);
      assert.equal(other.code, 2);
      assert.match(other.stderr, /answered HTTP 200 \(text\/html\), not a Quire API answer/);
    } finally {
      await new Promise((resolve) => html.close(resolve));
    }
  });

  test('login checks the key with GET /api/v1/usage and saves it; a refused key saves nothing', async () => {
    const refused = await run(['login', '--server', proxy.url, '--key', 'svc_not_a_key']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /does not accept this key \(invalid_api_key\); nothing was saved/);
    const saved = await run(['login', '--server', proxy.url, '--key', pro.key]);
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(saved.stdout, /^saved http:\/\/127\.0\.0\.1:\d+ and its key to .*config\.json \(mode 0600\): \d+\/2000 compiles this month\n$/);
    await rm(join(home, '.config'), { recursive: true, force: true });
  });

  test('watch (its own chunk of the bundle): the first PDF, a save, its PDF, Ctrl-C', async () => {
    const dir = await folder({ 'main.tex': HELLO.replace('Hello, Quire.', 'Version 0.') });
    const child = spawn(process.execPath, [BIN, 'watch', dir, '--server', proxy.url, '--key', pro.key], { env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const wrote = () => stdout.split('\n').filter((line) => line.startsWith('wrote ')).length;
    const until = async (count: number) => {
      const deadline = Date.now() + 120_000;
      while (wrote() < count) {
        if (Date.now() > deadline) throw new Error(`waited for PDF ${count}: ${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      await until(1);
      await writeFile(join(dir, 'main.tex'), HELLO.replace('Hello, Quire.', 'Version 1.'));
      await until(2);
    } finally {
      child.kill('SIGINT');
    }
    assert.equal(await exited, 0);
    assert.equal((await readFile(join(dir, 'main.pdf'))).subarray(0, 5).toString('latin1'), '%PDF-');
  });
});
