// The image builder's logic without building: which packages, which steps remain after an
// interruption, the percent and progress line, the lock between two setups, the settings, and
// how paths inside an image map to the host.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, texliveSettings } from '../../../src/config.js';
import { overallPercent, pendingSteps, STEPS } from '../../../src/tex/image/build.js';
import { acquireLock } from '../../../src/tex/image/lock.js';
import { Progress, progressLine } from '../../../src/tex/image/progress.js';
import { EXTRA_PACKAGES, extraPackages, parsePackageRecords, RELEASES, texlivePackages } from '../../../src/tex/image/releases.js';
import { installedImages, MARKER } from '../../../src/tex/image/store.js';
import { hostPath } from '../../../src/tex/image/tools.js';

test('every texlive package but documentation and metapackages', () => {
  const records = parsePackageRecords(
    [
      ['texlive-base', 'tex', 50327],
      ['texlive-fonts-extra', 'fonts', 1937821],
      ['texlive-fonts-extra-doc', 'doc', 265692],
      ['texlive-full', 'tex', 55],
      ['texlive-lang-all', 'tex', 56],
      ['texlive-fonts-extra-links', 'tex', 405],
      ['texlive-latex-base-doc', 'tex', 1336],
      ['texlive-publishers', 'oldlibs/tex', 107948],
    ]
      .map(([name, section, size]) => `Package: ${name}\nVersion: 2026.20260911-1\nSection: ${section}\nInstalled-Size: ${size}\n`)
      .join('\n'),
  );
  assert.equal(records.length, 8);
  assert.deepEqual(texlivePackages(records), ['texlive-base', 'texlive-fonts-extra', 'texlive-fonts-extra-links', 'texlive-publishers']);
});

test("each suite's extra packages leave out what its archive lacks (apt refuses the list for one unknown name)", () => {
  // trixie and bookworm have no fonts-ebgaramond-initials: `QUIRE_TEXLIVE=2024` setup stopped at
  // "Unable to locate package" until the list followed the suite.
  assert.deepEqual(extraPackages(RELEASES['2026'].suite), EXTRA_PACKAGES);
  for (const year of ['2024', '2022'] as const) {
    const list = extraPackages(RELEASES[year].suite);
    assert.ok(!list.includes('fonts-ebgaramond-initials'), year);
    assert.deepEqual(list, EXTRA_PACKAGES.filter((name) => name !== 'fonts-ebgaramond-initials'), year);
  }
});

test('an interrupted build resumes at the first step without a stamp; percent grows to 100', () => {
  assert.deepEqual(pendingSteps(new Set()), STEPS.map(([name]) => name));
  assert.deepEqual(pendingSteps(new Set(['debootstrap', 'configure'])), ['download', 'install', 'fonts', 'verify']);
  // A later stamp without an earlier one (should not happen) still reruns from the gap.
  assert.deepEqual(pendingSteps(new Set(['debootstrap', 'download'])), ['configure', 'download', 'install', 'fonts', 'verify']);
  assert.deepEqual(pendingSteps(new Set(STEPS.map(([name]) => name))), []);
  assert.equal(overallPercent('debootstrap', 0), 0);
  assert.equal(overallPercent('verify', 1), 100);
  assert.ok(overallPercent('install', 0.5) > overallPercent('download', 1));
  assert.equal(overallPercent('download', 7), overallPercent('download', 1), 'clamped');
});

test('the progress line says image, step, percent and elapsed time', () => {
  assert.equal(progressLine('2026', 'install', 61.7, 403_000), 'quire texlive 2026: install 61% (6m43s)');
  const lines: string[] = [];
  let now = 0;
  const progress = new Progress('2024', { write: (text: string) => lines.push(text), isTTY: false }, () => now);
  progress.update('download', 10);
  now = 5_000;
  progress.update('download', 20);
  now = 40_000;
  progress.update('download', 30);
  progress.update('install', 40);
  assert.deepEqual(lines, ['quire texlive 2024: download 10% (0s)\n', 'quire texlive 2024: download 30% (40s)\n', 'quire texlive 2024: install 40% (40s)\n']);
  const tty: string[] = [];
  new Progress('2022', { write: (text: string) => tty.push(text), isTTY: true }, () => 0).update('verify', 95);
  assert.deepEqual(tty, ['\r\x1b[Kquire texlive 2022: verify 95% (0s)']);
});

test('a second setup waits for the lock; a dead holder\'s lock is taken over', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quire-lock-'));
  try {
    const path = join(dir, '.build-2026.lock');
    const release = await acquireLock(path);
    assert.equal(await readFile(path, 'utf8'), String(process.pid));
    let waitedFor = 0;
    let second = false;
    const pending = acquireLock(path, { pollMs: 10, onWait: (pid) => (waitedFor = pid) }).then((r) => ((second = true), r));
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(second, false, 'held by a live process');
    assert.equal(waitedFor, process.pid);
    await release();
    await (await pending)();
    assert.equal(second, true);
    // A lock written by a process that has ended.
    const child = spawn('true');
    const dead = await new Promise<number>((resolve) => child.on('exit', () => resolve(child.pid!)));
    await writeFile(path, String(dead));
    const taken = await acquireLock(path, { pollMs: 10, onWait: () => assert.fail('a dead holder is not waited for') });
    assert.equal(await readFile(path, 'utf8'), String(process.pid));
    await taken();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('only images with a marker are installed; a half-built one is not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quire-images-'));
  try {
    await mkdir(join(dir, '2024', 'etc'), { recursive: true });
    await writeFile(join(dir, '2024', MARKER), JSON.stringify({ year: '2024', suite: 'trixie', texliveVersion: '2024.20250309-2', engines: {}, builtAt: '', buildSeconds: 1, bytes: 1 }));
    await mkdir(join(dir, '.build-2026', 'root', 'etc'), { recursive: true });
    await mkdir(join(dir, '2022', 'etc'), { recursive: true });
    assert.deepEqual(installedImages(dir).map((image) => [image.year, image.root]), [['2024', join(dir, '2024')]]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('QUIRE_TEXLIVE and QUIRE_TEXLIVE_DIR', () => {
  assert.deepEqual(texliveSettings({ QUIRE_TEXLIVE_DIR: '/srv/tl' }), { years: ['2026'], dir: '/srv/tl' });
  assert.deepEqual(texliveSettings({ QUIRE_TEXLIVE: '2022, 2026', QUIRE_TEXLIVE_DIR: '/srv/tl' }).years, ['2026', '2022'], 'newest first');
  assert.throws(() => texliveSettings({ QUIRE_TEXLIVE: '2025' }), ConfigError);
  assert.match(texliveSettings({}).dir, process.getuid?.() === 0 ? /^\/var\/lib\/quire\/texlive$/ : /\.local\/share\/quire\/texlive$/);
});

test('paths inside an image follow its own links, never the host\'s', async () => {
  const root = await mkdtemp(join(tmpdir(), 'quire-root-'));
  try {
    await mkdir(join(root, 'var/lib/texmf'), { recursive: true });
    await mkdir(join(root, 'usr/share/texlive/texmf-dist'), { recursive: true });
    await writeFile(join(root, 'var/lib/texmf/ls-R-TEXMFDIST'), 'x');
    await symlink('/var/lib/texmf/ls-R-TEXMFDIST', join(root, 'usr/share/texlive/texmf-dist/ls-R'));
    await symlink('usr/share', join(root, 'share'));
    await symlink('../../..', join(root, 'usr/share/texlive/up'));
    assert.equal(hostPath('/usr/share/texlive/texmf-dist/ls-R', root), join(root, 'var/lib/texmf/ls-R-TEXMFDIST'));
    assert.equal(hostPath('/share/texlive/texmf-dist', root), join(root, 'usr/share/texlive/texmf-dist'));
    assert.equal(hostPath('/usr/share/texlive/up/../../etc/passwd', root), join(root, 'etc/passwd'), 'no way above the root');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
