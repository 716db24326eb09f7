// `quire watch` as a user runs it, against a real server with real TeX: three saves in a row
// give at most three new PDFs and the last one shows the last save; a reader polling the PDF
// never sees a partial file; a broken save prints the diagnosis and keeps the last good PDF;
// saves that change nothing that travels start nothing; Ctrl-C (SIGINT) exits 0 and leaves
// no process and no temporary file behind.
import assert from 'node:assert/strict';
import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createAccount, type TestAccount } from '../helpers.js';
import { freshHome, project, ROOT, type Server, startServer, TSX } from './client-helpers.js';

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pdfText = async (path: string) => (await exec('pdftotext', [path, '-'])).stdout;
/**
 * Saves as most editors do, whole (a hidden temporary file renamed over the old one): a save
 * written in place can be caught half-way, truncated but not yet written, on a loaded machine,
 * and the watcher then rightly compiles the empty file it read.
 */
async function save(path: string, text: string): Promise<void> {
  const temporary = join(path, '..', `.${Date.now()}.swp`);
  await writeFile(temporary, text);
  await rename(temporary, path);
}

/** Waits (generously: the machine is shared) until `check` holds. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 180_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('quire watch against a real server', () => {
  let server: Server;
  let pro: TestAccount;
  let home: string;
  let cleanHome: () => Promise<void>;
  let dir: string;
  before(async () => {
    server = await startServer();
    pro = await createAccount(server.services, 'pro');
    ({ home, cleanup: cleanHome } = await freshHome());
    dir = await project({
      'main.tex': '\\documentclass{article}\n\\begin{document}\n\\input{chapters/body}\n\\end{document}\n',
      'chapters/body.tex': 'Version 0.\n',
    });
  });
  after(async () => {
    await server.close();
    await cleanHome();
    await rm(dir, { recursive: true, force: true });
  });

  test('saves, a broken save, saves that change nothing, and Ctrl-C', async () => {
    const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src', 'cli', 'quire.ts'), 'watch', dir, '--key', pro.key, '--server', server.url], {
      env: { PATH: process.env.PATH ?? '', HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const pdf = join(dir, 'main.pdf');
    const wrote = () => stdout.split('\n').filter((line) => line.startsWith('wrote ')).length;
    try {
      await until('the first PDF', () => wrote() === 1);
      assert.match(stderr, /^watching .* \(main file main\.tex, PDF .*main\.pdf\); Ctrl-C stops\n$/);
      assert.match(await pdfText(pdf), /Version 0\./);

      // A reader polling the PDF all along: every read is a whole PDF.
      let reading = true;
      const seen = new Set<string>();
      const reader = (async () => {
        while (reading) {
          const data = await readFile(pdf);
          assert.equal(data.subarray(0, 5).toString('latin1'), '%PDF-', 'a whole PDF from its first byte');
          assert.match(data.subarray(-32).toString('latin1'), /%%EOF\s*$/, 'a whole PDF to its last byte');
          seen.add(data.toString('base64'));
          await sleep(5);
        }
      })();

      for (const n of [1, 2, 3]) {
        await save(join(dir, 'chapters', 'body.tex'), `Version ${n}.\n`);
        await sleep(40);
      }
      await until('a PDF of the last save', async () => (await pdfText(pdf)).includes('Version 3.'));
      // Nothing stale comes after it: wait past any compile still in flight.
      await sleep(4000);
      assert.match(await pdfText(pdf), /Version 3\./);
      const afterEdits = wrote();
      assert.ok(afterEdits >= 2 && afterEdits <= 4, `one to three PDFs for three saves (${afterEdits - 1})`);
      reading = false;
      await reader;
      assert.ok(seen.size >= 2, 'the reader saw the PDF change');

      // Saves of nothing that travels: a build file, the same content again.
      await writeFile(join(dir, 'main.aux'), '\\relax\n');
      await save(join(dir, 'chapters', 'body.tex'), 'Version 3.\n');
      await sleep(3000);
      assert.equal(wrote(), afterEdits);
      assert.ok(!stderr.includes('error'), stderr);

      // A broken save: the diagnosis, and the last good PDF stays.
      const good = await stat(pdf);
      await save(join(dir, 'chapters', 'body.tex'), 'Broken \\undefinedmacro here.\n');
      await until('the diagnosis', () => stderr.includes('(kept the last good PDF'));
      assert.match(stderr, /chapters\/body\.tex:1: error: The command \\undefinedmacro on line 1 of chapters\/body\.tex is not defined\.\n {4}1 \| Broken \\undefinedmacro here\.\n {6}\| {8}\^~{14}\n/);
      assert.equal((await stat(pdf)).mtimeMs, good.mtimeMs);
      assert.match(await pdfText(pdf), /Version 3\./);

      child.kill('SIGINT');
      assert.equal(await exited, 0);
      assert.match(stderr, /stopped\n$/);
      const { stdout: ps } = await exec('ps', ['-eo', 'pid,args']);
      assert.ok(!ps.includes(dir), `no process left with ${dir}:\n${ps}`);
      assert.deepEqual((await readdir(dir)).filter((name) => name.includes('quire-tmp')), []);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
