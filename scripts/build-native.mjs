// Compiles native/kpse-hash.c, the library that fills kpathsea's file database in linear
// time (src/tex/sandbox/kpse-hash.ts), into dist/native/. Without a C compiler the service runs as
// well, only each TeX process reads ls-R at kpathsea's own speed: a warning, not a failure.
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'native');
mkdirSync(out, { recursive: true });
const target = join(out, 'kpse-hash.so');
const partial = `${target}.${process.pid}`;
const cc = process.env.CC || 'cc';
// -ldl: dlsym lives in libdl before glibc 2.34 (TeX Live 2022's Debian 12 has 2.36; harmless there).
const args = ['-O2', '-shared', '-fPIC', '-Wall', '-Wextra', '-Werror', '-o', partial, join(root, 'native', 'kpse-hash.c'), '-ldl'];
const result = spawnSync(cc, args, { encoding: 'utf8' });
if (result.status === 0) {
  renameSync(partial, target);
} else {
  rmSync(partial, { force: true });
  // An older build must not stand in for this source.
  rmSync(target, { force: true });
  const why = result.error ? `${cc} not found` : result.stderr.trim();
  console.error(`quire build: native/kpse-hash.c not compiled (${why}); TeX reads its file database at kpathsea's own speed`);
}
