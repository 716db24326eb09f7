// kpathsea's file database in linear time (kpse-hash.ts, native/kpse-hash.c): the built
// library passes its check on the image and goes beside the formats; the TeX engines preload
// it and the sandbox's other processes do not; documents come out as without it; a library
// that builds another table (the same entries, another order) fails the check, and so does
// one whose functions another library of the image defines or calls; a library planted in a
// reused formats folder is not loaded.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stable, text } from './support.js';
import { HELLO } from '../helpers.js';
import { CONVERTER_UID } from '../../src/tex/sandbox/uids.js';
import { prepareFormats, type Formats } from '../../src/tex/caches/formats.js';
import type { TexJob } from '../../src/tex/job.js';
import { builtLibrary, checkNames, KPSE_HASH, libraryAgrees, preloadPath, symbolClashes } from '../../src/tex/sandbox/kpse-hash.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { imageToolOutput } from '../../src/tex/image/tools.js';
import { TexRunner } from '../../src/tex/runner.js';

const UID = process.getuid?.() === 0 ? CONVERTER_UID - 10 : undefined;
const MB = 1024 * 1024;

/** kpathsea's hash_insert with the one difference that matters: each entry goes first in its bucket. */
const PREPENDING = `
typedef struct e { const char *key; const char *value; struct e *next; } e;
typedef struct { e **buckets; unsigned size; } table;
#include <stdlib.h>
void hash_insert(table *t, const char *key, const char *value) {
  unsigned n = 0;
  for (const char *k = key; *k; k++) n = (n + n + *k) % t->size;
  e *x = malloc(sizeof *x);
  x->key = key; x->value = value; x->next = t->buckets[n]; t->buckets[n] = x;
}
void hash_insert_normalized(table *t, const char *key, const char *value) { hash_insert(t, key, value); }
`;

/** A library planted where the built one belongs: if a TeX process loads it, it says so and ends. */
const PLANTED = `
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) { puts("quire-planted-canary"); fflush(stdout); _exit(1); }
`;

/** The functions native/kpse-hash.c stands in for. */
const STOOD_IN = ['hash_create', 'hash_insert', 'hash_insert_normalized', 'hash_lookup', 'hash_print', 'hash_remove', 'hash_free'];

/** A program that calls kpathsea's hash_lookup itself (not through libkpathsea). */
const CALLER = `
typedef struct { void **buckets; unsigned size; } table;
char **hash_lookup(table t, const char *key);
int main(void) { table t = {0, 0}; return hash_lookup(t, "x") != 0; }
`;

describe('kpathsea file database in linear time', () => {
  let root: string;
  let formats: Formats;
  let preloaded: TexRunner;
  let plain: TexRunner;
  const job = (compiler: TexJob['compiler'], source: string): TexJob => ({ source, compiler, timeoutMs: 60_000, maxFileBytes: 16 * MB });

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-kpse-hash-'));
    await chmod(root, 0o711);
    formats = await prepareFormats(root, defaultImageRoot());
    const luaCache = () => prepareLuaCache(join(tmpdir(), 'quire-jobs'), defaultImageRoot());
    preloaded = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), luaCache, formats: async () => formats });
    plain = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), luaCache, formats: async () => ({ ...formats, kpseHash: false }) });
  });
  after(async () => {
    await Promise.all([preloaded.close(), plain.close()]);
    await rm(root, { recursive: true, force: true });
  });

  test('the built library passes its check on the image and goes beside the formats, byte for byte', async () => {
    const library = builtLibrary();
    assert.ok(library, 'npm run build compiled native/kpse-hash.c');
    assert.equal(formats.kpseHash, true);
    assert.ok((await readFile(join(formats.dir, KPSE_HASH))).equals(await readFile(library)));
  });

  test('the TeX engines preload it: a lualatex pass finds it in its own memory map', async () => {
    const probe = (runner: TexRunner) =>
      runner.run(
        job(
          'lualatex',
          '\\documentclass{article}\\begin{document}\\directlua{local f = io.open("/proc/self/maps") local m = f:read("a") f:close() tex.print(m:find("kpse-hash.so", 1, true) and "library-loaded" or "library-absent")}\\end{document}',
        ),
        UID,
      );
    const [withLibrary, without] = await Promise.all([probe(preloaded), probe(plain)]);
    assert.equal(withLibrary.outcome, 'ok', withLibrary.log.slice(-800));
    assert.match(text(withLibrary.pdf), /library-loaded/);
    assert.equal(without.outcome, 'ok', without.log.slice(-800));
    assert.match(text(without.pdf), /library-absent/);
  });

  test("only the engine loads it: the sandbox's shell that started the engine has neither the library nor LD_PRELOAD", async () => {
    // Read by the engine: its parent (the sandbox's driver shell) through /proc. No % or # (TeX's).
    const lua = [
      'local function read(p) local f = io.open(p) if not f then return "unreadable" end local s = f:read("a") f:close() return s end',
      'local stat = read("/proc/self/stat")',
      'local ppid = stat:sub(stat:find(")", 1, true) + 4):match("^[0-9]+")',
      'local own = read("/proc/self/maps"):find("kpse-hash.so", 1, true) and "own-loaded" or "own-absent"',
      'local maps = read("/proc/" .. ppid .. "/maps"):find("kpse-hash.so", 1, true) and "parent-loaded" or "parent-absent"',
      'local env = read("/proc/" .. ppid .. "/environ"):find("LD_PRELOAD", 1, true) and "parent-preloads" or "parent-clean"',
      'tex.print(own .. " " .. maps .. " " .. env)',
    ].join(' ');
    const result = await preloaded.run(job('lualatex', `\\documentclass{article}\\begin{document}\\directlua{${lua}}\\end{document}`), UID);
    assert.equal(result.outcome, 'ok', result.log.slice(-800));
    assert.match(text(result.pdf), /own-loaded parent-absent parent-clean/);
  });

  test('documents come out as without it: pdflatex byte for byte, xelatex and lualatex in pages and text', async () => {
    const pdflatex = [
      '\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{lmodern,amssymb,tikz,hyperref}\\begin{document}\\section{A}\\label{a}See \\ref{a}. $\\mathbb{R}$ \\tikz\\draw (0,0) circle (1);\\end{document}',
      '\\documentclass{beamer}\\usetheme{Madrid}\\begin{document}\\begin{frame}{Title}Body\\end{frame}\\end{document}',
    ];
    for (const source of pdflatex) {
      const [hot, ref] = [await preloaded.run(job('pdflatex', source), UID), await plain.run(job('pdflatex', source), UID)];
      assert.equal(hot.outcome, 'ok', hot.log.slice(-800));
      assert.equal(ref.outcome, 'ok', ref.log.slice(-800));
      assert.equal(stable(hot.pdf), stable(ref.pdf), source);
    }
    const unicode = '\\documentclass{article}\\usepackage{fontspec,unicode-math}\\setmainfont{TeX Gyre Pagella}\\begin{document}Grüße, Quire. $\\alpha + \\beta$\\end{document}';
    for (const compiler of ['xelatex', 'lualatex'] as const) {
      const [hot, ref] = [await preloaded.run(job(compiler, unicode), UID), await plain.run(job(compiler, unicode), UID)];
      assert.equal(hot.outcome, 'ok', hot.log.slice(-800));
      assert.equal(hot.pages, ref.pages);
      assert.equal(text(hot.pdf), text(ref.pdf));
      assert.match(text(hot.pdf), /Grüße, Quire/);
    }
  });

  test('the table answers as kpathsea’s, node for node: after the read, an insert after a lookup, a remove, a second large table', async () => {
    // The probe (test/fixtures/native/) calls kpathsea's hash functions as libkpathsea does,
    // through the dynamic linker, so a preloaded library's stand in for them.
    const dir = join(root, 'probe');
    await mkdir(dir, { mode: 0o755 });
    execFileSync('cc', ['-O2', '-o', join(dir, 'probe'), join(import.meta.dirname, '../fixtures/native/kpse-hash-probe.c'), '-ldl']);
    await writeFile(join(root, 'prepend.c'), PREPENDING);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(dir, 'prepend.so'), join(root, 'prepend.c')]);
    await copyFile(builtLibrary()!, join(dir, KPSE_HASH));
    const image = defaultImageRoot();
    const inside = image !== undefined ? '/texmf-fmt' : dir;
    const run = async (preload?: string) => (await imageToolOutput([`${inside}/probe`], { formats: dir, ...(preload ? { env: { LD_PRELOAD: preload } } : {}) }, image)).stdout;
    const [kpathsea, library, prepending] = await Promise.all([run(), run(preloadPath(dir, image !== undefined)), run(`${inside}/prepend.so`)]);
    assert.equal(kpathsea.split('\n').length, 10_007);
    assert.match(kpathsea, /^n5\.sty: \/dir5\/ \/dir140005\/ \/late\/$/m);
    assert.match(kpathsea, /^n7\.sty: \/dir7\/$/m);
    assert.match(kpathsea, /^été-3\.tfm: \/dir3\/$/m);
    assert.match(kpathsea, /^TEXINPUTS: \. \/tex\/\/$/m);
    assert.equal(library, kpathsea);
    // The probe does go through a preloaded library: one that chains in another order shows.
    assert.notEqual(prepending, kpathsea);
  });

  test('a library that fills the table in another order fails the check; the built one passes it', async () => {
    const wrong = join(root, 'wrong');
    const right = join(root, 'right');
    await Promise.all([mkdir(wrong, { mode: 0o755 }), mkdir(right, { mode: 0o755 })]);
    await writeFile(join(root, 'prepend.c'), PREPENDING);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(wrong, KPSE_HASH), join(root, 'prepend.c')]);
    await copyFile(builtLibrary()!, join(right, KPSE_HASH));
    const image = defaultImageRoot();
    assert.equal(await libraryAgrees(wrong, image), false);
    assert.equal(await libraryAgrees(right, image), true);
    // A folder without the library: nothing to preload, so no.
    assert.equal(await libraryAgrees(root, image), false);
  });

  test('a library planted in a reused formats folder is not loaded (the folder trusted as it was before would have loaded it)', async () => {
    const formatsRoot = join(root, 'reused');
    await mkdir(formatsRoot, { mode: 0o711 });
    const first = await prepareFormats(formatsRoot, defaultImageRoot());
    assert.equal(first.kpseHash, true);
    await writeFile(join(root, 'planted.c'), PLANTED);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(first.dir, KPSE_HASH), join(root, 'planted.c')]);
    const again = await prepareFormats(formatsRoot, defaultImageRoot());
    assert.equal(again.dir, first.dir, 'the ready folder is reused');
    assert.equal(again.kpseHash, false, 'its library is not the one built');
    const reused = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), warm: false, formats: async () => again });
    const trusting = new TexRunner({ workRoot: join(root, 'jobs'), isolate: true, root: defaultImageRoot(), warm: false, formats: async () => ({ ...again, kpseHash: true }) });
    try {
      const result = await reused.run(job('pdflatex', HELLO), UID);
      assert.equal(result.outcome, 'ok', result.log.slice(-800));
      assert.match(text(result.pdf), /Hello, Quire/);
      // The canary: the planted library, had it been loaded, ends TeX and says so.
      await assert.rejects(trusting.run(job('pdflatex', HELLO), UID), /quire-planted-canary/);
    } finally {
      await Promise.all([reused.close(), trusting.close()]);
    }
  });

  test('the check sweeps the image: no program or library defines or calls its functions, and one that does fails the check', async () => {
    // xdvi calls kpathsea's hash functions itself: a kpathsea user, it gets kpathsea's answers, no clash.
    assert.deepEqual(await symbolClashes(STOOD_IN, defaultImageRoot()), [], 'the TeX image has no clash');
    // A small image whose libraries clash: one defines hash_insert, a program calls hash_lookup;
    // a program's own definition (bash's hash_insert) and libkpathsea itself do not count.
    const fake = join(root, 'fake-image');
    await mkdir(join(fake, 'usr', 'lib', 'x86_64-linux-gnu'), { recursive: true });
    await mkdir(join(fake, 'usr', 'bin'), { recursive: true });
    await writeFile(join(root, 'prepend.c'), PREPENDING);
    await writeFile(join(root, 'caller.c'), CALLER);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(fake, 'usr', 'lib', 'x86_64-linux-gnu', 'libclash.so.1'), join(root, 'prepend.c')]);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(fake, 'usr', 'lib', 'x86_64-linux-gnu', 'libkpathsea.so.6'), join(root, 'prepend.c')]);
    // Linked against a library outside the image that has the function: the program imports it.
    await writeFile(join(root, 'dep.c'), 'char **hash_lookup(void *a, unsigned b, const char *k) { (void)a; (void)b; (void)k; return 0; }\n');
    execFileSync('cc', ['-shared', '-fPIC', '-o', join(root, 'libdep.so'), join(root, 'dep.c')]);
    execFileSync('cc', ['-O2', '-o', join(fake, 'usr', 'bin', 'caller'), join(root, 'caller.c'), `-L${root}`, '-ldep']);
    await writeFile(join(root, 'definer.c'), 'void hash_insert(void) {}\nint main(void) { hash_insert(); return 0; }\n');
    execFileSync('cc', ['-O2', '-rdynamic', '-o', join(fake, 'usr', 'bin', 'definer'), join(root, 'definer.c')]);
    assert.deepEqual((await symbolClashes(STOOD_IN, fake))?.sort(), [
      '/usr/bin/caller: hash_lookup',
      '/usr/lib/x86_64-linux-gnu/libclash.so.1: hash_insert',
      '/usr/lib/x86_64-linux-gnu/libclash.so.1: hash_insert_normalized',
    ]);
    const right = join(root, 'swept');
    await mkdir(right, { mode: 0o755 });
    await copyFile(builtLibrary()!, join(right, KPSE_HASH));
    let why = '';
    assert.equal(await libraryAgrees(right, fake, (reason) => (why = reason)), false);
    assert.match(why, /other programs or libraries define or call its functions: .*libclash\.so\.1: hash_insert/);
  });

  test('the check looks up every 50th name and the names most folders share', () => {
    const db = ['% ls-R -- filename database', './tex/a:', ...Array.from({ length: 100 }, (_, i) => `f${i}.sty`), '', './tex/b:', 'README', './tex/c:', 'README', './tex/d:', 'README', 'twice.sty', './tex/e:', 'twice.sty'].join('\n');
    assert.deepEqual(checkNames([db]), ['f49.sty', 'f99.sty', 'README']);
  });
});
