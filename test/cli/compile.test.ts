// `quire compile` as a user runs it (a process, src/cli/quire.ts) against a real server on
// loopback with real TeX: a thesis-shaped folder to a PDF with the right page count (what was
// not sent is checked by TeX on the server, which looks for each file), the main file by
// detection, --main and a .tex PATH, a broken document printed compiler-style with exit 1,
// the keyless tier, servers that cannot answer (exit 2), an exhausted quota (exit 3), login,
// and the progress line (a terminal only).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { monthlyCompilesKey } from '../../src/quota/keys.js';
import { createAccount, type TestAccount } from '../helpers.js';
import { freshHome, project, quire, ROOT, type Server, startServer, TSX } from './client-helpers.js';

const exec = promisify(execFile);
const readFixture = (name: string) => readFile(join(ROOT, 'test', 'fixtures', 'assets', name));
const pdfText = async (path: string) => (await exec('pdftotext', ['-layout', path, '-'])).stdout;
const pdfPages = async (path: string) => Number(/^Pages:\s+(\d+)/m.exec((await exec('pdfinfo', [path])).stdout)![1]);
const doc = (body: string, preamble = '') => `\\documentclass{article}\n${preamble}\\begin{document}\n${body}\n\\end{document}\n`;

describe('quire compile against a real server', () => {
  let server: Server;
  let pro: TestAccount;
  let home: string;
  let cleanHome: () => Promise<void>;
  const dirs: string[] = [];
  const folder = async (files: Record<string, string | Uint8Array>) => {
    const dir = await project(files);
    dirs.push(dir);
    return dir;
  };
  const run = (args: string[], cwd: string, env: Record<string, string> = {}) => quire(args, { cwd, home, env });

  before(async () => {
    server = await startServer();
    pro = await createAccount(server.services, 'pro');
    ({ home, cleanup: cleanHome } = await freshHome());
  });
  after(async () => {
    await server.close();
    await cleanHome();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a thesis folder (chapters in folders, a figure, a bibliography) becomes a PDF with its 4 pages; build files and .quireignore stay home', async () => {
    const probe = (file: string, tag: string) => `\\IfFileExists{${file}}{${tag}-sent}{${tag}-absent}`;
    const dir = await folder({
      'thesis/thesis.tex': doc(
        [
          '\\input{chapters/intro}',
          '\\newpage\n\\input{chapters/method}',
          '\\newpage\n\\includegraphics[width=3cm]{figures/plot.pdf} As \\cite{knuth} shows.',
          '\\newpage',
          [probe('chapters/intro.tex', 'canary'), probe('thesis.aux', 'aux'), probe('chapters/intro.aux', 'subaux'), probe('drafts/plan.tex', 'ignored'), probe('secret-a.tex', 'glob'), probe('secret-keep.tex', 'negated')].join('\n\n'),
          '\\bibliographystyle{plain}\n\\bibliography{refs}',
        ].join('\n'),
        '\\usepackage{graphicx}\n',
      ),
      'thesis/chapters/intro.tex': 'The introduction.\n',
      'thesis/chapters/method.tex': 'The method.\n',
      'thesis/figures/plot.pdf': await readFixture('doc.pdf'),
      'thesis/refs.bib': '@book{knuth, author={Donald Knuth}, title={The TeXbook}, year=1984}\n',
      'thesis/thesis.aux': '\\relax\n',
      'thesis/thesis.log': 'old log\n',
      'thesis/thesis.pdf': '%PDF-1.4 stale',
      'thesis/chapters/intro.aux': '\\relax\n',
      'thesis/drafts/plan.tex': 'a draft\n',
      'thesis/secret-a.tex': 'secret\n',
      'thesis/secret-keep.tex': 'kept\n',
      'thesis/.git/HEAD': 'ref: refs/heads/main\n',
      'thesis/.quireignore': 'drafts/\nsecret-*.tex\n!secret-keep.tex\n',
    });
    const r = await run(['compile', 'thesis/', '--key', pro.key, '--server', server.url, '--verbose'], dir);
    assert.equal(r.code, 0, r.stderr);
    const pdf = join(dir, 'thesis', 'thesis.pdf');
    assert.match(r.stdout, /^wrote thesis\/thesis\.pdf: 4 pages, \d+\.\d+ s on the server, \d+\.\d+ s end to end \(pro: 1\/2000 this month\)\n$/);
    assert.equal(await pdfPages(pdf), 4);
    const text = await pdfText(pdf);
    for (const seen of ['The introduction.', 'The method.', 'The TeXbook', 'canary-sent', 'aux-absent', 'subaux-absent', 'ignored-absent', 'glob-absent', 'negated-sent']) assert.ok(text.includes(seen), `${seen} in the PDF`);
    for (const line of [
      'skipped .git/: a dot folder (the service skips these)',
      'skipped drafts/: matched by .quireignore',
      'skipped secret-a.tex: matched by .quireignore',
      'skipped thesis.aux: build output (.aux)',
      'skipped chapters/intro.aux: build output (.aux)',
      'skipped thesis.log: build output (.log)',
      'skipped thesis.pdf: the PDF this command writes',
    ]) assert.ok(r.stderr.includes(`  ${line}\n`), `${line} in:\n${r.stderr}`);
    assert.ok(!r.stderr.includes('\r'), 'no progress line when stderr is not a terminal');
  });

  test('the main file: detected in the current folder, ambiguous folders refused with the candidates, --main, a .tex PATH, -o and --engine', async () => {
    const single = await folder({ 'paper.tex': doc('Paper body.'), 'chapters/intro.tex': doc('Not the main file.') });
    let r = await run(['compile', '--key', pro.key, '--server', server.url], single);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote paper\.pdf: 1 page, /);
    assert.match(await pdfText(join(single, 'paper.pdf')), /Paper body\./);

    const two = await folder({ 'a.tex': doc('Document A.'), 'b.tex': doc('Document B.') });
    r = await run(['compile', '.', '--key', pro.key, '--server', server.url], two);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /quire compile: 2 top-level \.tex files in .* have \\documentclass \(a\.tex, b\.tex\): name the main one with --main, or call it main\.tex\n/);
    await assert.rejects(stat(join(two, 'a.pdf')));

    r = await run(['compile', '.', '--main', 'b.tex', '--key', pro.key, '--server', server.url], two);
    assert.equal(r.code, 0, r.stderr);
    assert.match(await pdfText(join(two, 'b.pdf')), /Document B\./);

    r = await run(['compile', 'a.tex', '-o', 'out/a-lua.pdf', '--engine', 'lualatex', '--key', pro.key, '--server', server.url], two);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote out\/a-lua\.pdf: 1 page, /);
    assert.match(await pdfText(join(two, 'out', 'a-lua.pdf')), /Document A\./);
    assert.match((await exec('pdfinfo', [join(two, 'out', 'a-lua.pdf')])).stdout, /^Producer:\s+LuaTeX/m);

    r = await run(['compile', '.', '--engine', 'troff', '--server', server.url], two);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'quire compile: --engine must be one of pdflatex, xelatex, lualatex (got troff)\n');
  });

  test('a broken document exits 1 with file:line, the source line with a caret, the fix and the line to paste; --log and --json', async () => {
    const dir = await folder({
      'main.tex': doc('\\input{chapters/intro}\nThe distance is \\SI{3}{\\metre} away.'),
      'chapters/intro.tex': 'Fine.\n',
    });
    let r = await run(['compile', '--key', pro.key, '--server', server.url], dir);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const [first, source, caret, fix, add] = r.stderr.split('\n');
    assert.match(first!, /^main\.tex:4: error: The command \\SI on line 4 is not defined\. It is provided by the package siunitx/);
    assert.equal(source, '    4 | The distance is \\SI{3}{\\metre} away.');
    assert.equal(caret, '      |                 ^~~');
    assert.match(fix!, /^ {2}fix: Add \\usepackage\{siunitx\} to the preamble/);
    assert.equal(add, '  add: \\usepackage{siunitx}');
    await assert.rejects(stat(join(dir, 'main.pdf')));

    // An error inside an \input file is placed in that file.
    const nested = await folder({ 'main.tex': doc('\\input{chapters/intro}'), 'chapters/intro.tex': 'One.\n\\begin{itemize}\n\\item two\n\\end{enumerate}\n' });
    r = await run(['compile', '.', '--key', pro.key, '--server', server.url, '--log', '--json'], nested);
    assert.equal(r.code, 1);
    const body = JSON.parse(r.stdout);
    assert.equal(body.error, 'compilation_failed');
    assert.match(r.stderr, /^--- log ---\nThis is pdfTeX/);
    assert.ok(r.stderr.includes('./chapters/intro.tex:4: LaTeX Error: \\begin{itemize} on input line 2 ended by \\end{enumerate}.'));
    r = await run(['compile', '.', '--key', pro.key, '--server', server.url], nested);
    assert.equal(r.code, 1);
    assert.deepEqual(r.stderr.split('\n').slice(0, 3), [
      'chapters/intro.tex:4: error: \\begin{itemize} (opened on line 2 of chapters/intro.tex) is closed by \\end{enumerate} on line 4 of chapters/intro.tex.',
      '    4 | \\end{enumerate}',
      '      | ^~~~~~~~~~~~~~~',
    ]);
  });

  test('without a key the keyless tier is used and the command says so; what it refuses says how to get a key (exit 3)', async () => {
    const dir = await folder({ 'main.tex': doc('Keyless.') });
    let r = await run(['compile', '--server', server.url], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `quire: no API key for ${server.url} (--key, QUIRE_API_KEY or quire login): using the keyless tier (pdflatex, a few pages and compiles a day, no images)\n`);
    assert.match(r.stdout, /^wrote main\.pdf: 1 page, .* \(keyless: \d+ left today\)\n$/);

    const withFigure = await folder({ 'main.tex': doc('\\includegraphics{plot.png}', '\\usepackage{graphicx}\n'), 'plot.png': await readFixture('logo.png') });
    r = await run(['compile', '--server', server.url], withFigure);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /\nquire: .*\(assets_not_available_anonymously\)\n {2}this was the keyless tier: get an API key.*, then run quire login --server http:\/\/127\.0\.0\.1:\d+ --key <KEY>\n$/);
  });

  test('a server that cannot be reached, or is not Quire, or a malformed URL: exit 2 with a clear message', async () => {
    const dir = await folder({ 'main.tex': doc('x') });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    let r = await run(['compile', '--server', `http://127.0.0.1:${port}`, '--key', pro.key], dir);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `quire: cannot reach the Quire server at http://127.0.0.1:${port} (ECONNREFUSED); start one with \`npm start\`, or name another with --server or QUIRE_URL\n`);

    const web = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    try {
      r = await run(['compile', '--server', `http://127.0.0.1:${(web.address() as AddressInfo).port}`, '--key', pro.key], dir);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /answered HTTP 404 \(text\/html\), not a Quire API answer: is --server the address of a Quire server\?\n$/);
    } finally {
      await new Promise((resolve) => web.close(resolve));
    }
    r = await run(['compile', '--server', 'ftp://example.com'], dir);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the server URL must start with http:\/\/ or https:\/\//);
    assert.equal((await stat(join(dir, 'main.pdf')).catch(() => null)), null);
  });

  test('an account whose monthly compiles are used up exits 3 and says when they reset', async () => {
    const free = await createAccount(server.services, 'free');
    const key = monthlyCompilesKey(free.id, server.services.clock.now());
    await server.services.db.kysely.insertInto('counters').values({ key, used: 50, reserved: 0, expires_at: '2099-01-01T00:00:00.000Z' }).execute();
    const dir = await folder({ 'main.tex': doc('Over quota.') });
    const r = await run(['compile', '--key', free.key, '--server', server.url], dir);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^quire: .*\(rate_limit\)\n {2}the limit resets at \d{4}-\d\d-\d\dT/);
    assert.ok(!r.stderr.includes('keyless'));
    await assert.rejects(stat(join(dir, 'main.pdf')));
  });

  test('quire login saves server and key (mode 0600) after the server accepts it; compile uses the key for that server only', async () => {
    const { home: own, cleanup } = await freshHome();
    try {
      const dir = await folder({ 'main.tex': doc('Logged in.') });
      let r = await quire(['login', '--server', server.url, '--key', 'svc_wrong'], { cwd: dir, home: own });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /does not accept this key \(invalid_api_key\); nothing was saved/);
      await assert.rejects(stat(join(own, '.config', 'quire', 'config.json')));

      r = await quire(['login', '--server', `${server.url}/`, '--key', pro.key], { cwd: dir, home: own });
      assert.equal(r.code, 0, r.stderr);
      const path = join(own, '.config', 'quire', 'config.json');
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { server: server.url, key: pro.key });

      r = await quire(['compile'], { cwd: dir, home: own });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /\(pro: \d+\/2000 this month\)\n$/);
      // Another address: the saved key is not sent there.
      r = await quire(['compile', '--server', server.url.replace('127.0.0.1', 'localhost')], { cwd: dir, home: own });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /using the keyless tier/);
      // QUIRE_URL and QUIRE_API_KEY come before the file.
      r = await quire(['compile'], { cwd: dir, home: own, env: { QUIRE_URL: server.url, QUIRE_API_KEY: 'svc_from_env' } });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /\(invalid_api_key\)/);
    } finally {
      await cleanup();
    }
  });

  test('on a terminal a progress line appears once a compile takes over a second, and is erased', async () => {
    // tikz and pgfplots plotting take well over a second on any machine.
    const dir = await folder({
      'main.tex': doc('\\begin{tikzpicture}\\begin{axis}\\addplot[samples=1500]{sin(deg(x))*x^2};\\addplot[samples=1500]{cos(deg(x))};\\end{axis}\\end{tikzpicture}', '\\usepackage{pgfplots}\n\\pgfplotsset{compat=1.18}\n'),
    });
    const command = [process.execPath, '--import', TSX, join(ROOT, 'src', 'cli', 'quire.ts'), 'compile', '--key', pro.key, '--server', server.url].map((a) => `'${a}'`).join(' ');
    const out = await new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      // script(1) gives the command a real terminal; -e passes its exit code through.
      const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: home, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, text }));
    });
    assert.equal(out.code, 0, out.text);
    assert.match(out.text, /\r\x1b\[K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] uploading and compiling on the server… 1\.\d s/);
    assert.match(out.text, /\r\x1b\[Kwrote main\.pdf: 1 page, /);
  });
});
