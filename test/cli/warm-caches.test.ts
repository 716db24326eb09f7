// `texlive-images.js --warm` (what the container image bakes): prepares each served image's
// inflated formats and lualatex font cache where the service looks for them, and a service
// started afterwards uses them as they are (its first lualatex job builds nothing).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { createAccount, testApp, type TestApp } from '../helpers.js';

const run = promisify(execFile);
const CLI = new URL('../../src/cli/texlive-images.ts', import.meta.url).pathname;
const savedTmpdir = process.env.TMPDIR;
let dir: string;
let quire: TestApp | undefined;

before(async () => {
  // A TMPDIR of its own: the work root (TMPDIR/quire-jobs) starts empty. Job uids traverse it.
  dir = await mkdtemp(join(tmpdir(), 'quire-warm-caches-'));
  await chmod(dir, 0o755);
});

after(async () => {
  await quire?.close();
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  await rm(dir, { recursive: true, force: true });
});

test('--warm bakes the formats and the lualatex font cache, and the service then uses them untouched', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', CLI, '--warm'], { env: { ...process.env, TMPDIR: dir }, timeout: 600_000 });
  const root = join(dir, 'quire-jobs');
  const [image, ...others] = (await readdir(root)).filter((name) => name.startsWith('texlive-'));
  assert.ok(image && others.length === 0, `one image's caches in ${root}`);
  const caches = join(root, image);
  const [formats] = (await readdir(caches)).filter((name) => /^formats-[0-9a-f]{16}$/.test(name));
  assert.ok(formats, `a formats folder in ${caches}`);
  assert.match(stdout, new RegExp(`^quire texlive \\d{4}: caches ready \\(${caches}/${formats}, ${caches}/texmf-var\\)$`, 'm'));
  // The work root is made as the service makes it: the service refuses one others may write to.
  assert.equal((await stat(root)).mode & 0o777, 0o711);
  const luaReady = await readFile(join(caches, 'texmf-var/.ready'), 'utf8');
  const formatsReady = await stat(join(caches, formats, '.ready'));
  assert.ok((await readdir(join(caches, formats))).includes('lualatex.fmt'));

  process.env.TMPDIR = dir;
  quire = await testApp();
  const account = await createAccount(quire.services);
  const response = await quire.app.inject({
    method: 'POST',
    url: '/api/v1/compile',
    headers: account.headers,
    payload: { latex: '\\documentclass{article}\\begin{document}Hello from lualatex.\\end{document}', compiler: 'lualatex' },
  });
  assert.equal(response.statusCode, 200, response.body.slice(0, 400));
  // The canary: a cache built again would have a new .ready (its build time) or leave a
  // luacache-* / formats-build-* folder behind it; the formats would be another folder.
  assert.equal(await readFile(join(caches, 'texmf-var/.ready'), 'utf8'), luaReady);
  // .formats-in-use: the processes that use a formats folder mark it (formats.ts), so another build's start keeps it.
  assert.deepEqual((await readdir(caches)).sort(), ['.formats-in-use', formats, 'texmf-var']);
  // … and a service that looked elsewhere would have made another folder beside it.
  assert.deepEqual((await readdir(root)).filter((name) => !/^p\d+-\d+$/.test(name)), [image]);
  assert.equal((await stat(join(caches, formats, '.ready'))).mtimeMs, formatsReady.mtimeMs);
});
