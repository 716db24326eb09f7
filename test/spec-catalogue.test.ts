// The error catalogue against the contract (issue #14): every code SPEC §7 names, and every
// row of docs/errors.md, is in src/errors.ts with the same status. SPEC sits beside the
// checkout (../shared/SPEC.md), as it does for CI, beside the local checkout this one was
// cloned from, or beside the main checkout of a git worktree; rows whose code is
// "(Error body)" or "(per-minute)" name no code.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, ERROR_STATUS, isErrorCode } from '../src/errors.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const origin = (() => {
  try {
    return execFileSync('git', ['config', '--get', 'remote.origin.url'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const commonGitDir = (() => {
  try {
    return resolve(root, execFileSync('git', ['rev-parse', '--git-common-dir'], { cwd: root, encoding: 'utf8' }).trim());
  } catch {
    return '';
  }
})();
const candidates = [
  join(root, '../shared/SPEC.md'),
  ...(origin.startsWith('/') ? [join(origin, '../shared/SPEC.md')] : []),
  ...(commonGitDir ? [join(dirname(commonGitDir), '../shared/SPEC.md')] : []),
];
const found = candidates.find((path) => existsSync(path));
assert.ok(found, `SPEC.md not found beside the checkout (looked at ${candidates.join(', ')})`);
const spec = readFileSync(found, 'utf8');

test('every code in SPEC §7 is in the catalogue with the status SPEC gives it', () => {
  const section = spec.slice(spec.indexOf('## 7. Errors'), spec.indexOf('## 8. Limits'));
  const rows = [...section.matchAll(/^\| (\d{3}) \| ([a-z_]+) \|/gm)].map((m) => ({ code: m[2]!, status: Number(m[1]) }));
  assert.ok(rows.length >= 40, `read ${rows.length} coded rows from SPEC §7`);
  const catalogue: Record<string, number> = ERROR_STATUS;
  for (const { code, status } of rows) {
    assert.equal(catalogue[code], status, `${code}: SPEC says ${status}`);
  }
});

test('every row of docs/errors.md names a catalogue code with the catalogue status', () => {
  const docs = readFileSync(join(root, 'docs/errors.md'), 'utf8');
  const rows = [...docs.matchAll(/^\| (\d{3}) \| `([a-z0-9_]+)` \|/gm)].map((m) => ({ code: m[2]!, status: Number(m[1]) }));
  assert.ok(rows.length >= 90, `read ${rows.length} rows from docs/errors.md`);
  for (const { code, status } of rows) {
    assert.ok(isErrorCode(code), `${code} (docs/errors.md) is in the catalogue`);
    assert.equal(CATALOGUE[code].status, status, `${code}: docs/errors.md says ${status}`);
  }
  const documented = new Set(rows.map((row) => row.code));
  for (const code of Object.keys(CATALOGUE)) assert.ok(documented.has(code), `${code} is documented in docs/errors.md`);
});
