// The error catalogue against the contract (issue #14): every code SPEC §7 names is in
// src/errors.ts with SPEC's status. SPEC sits beside the checkout (../shared/SPEC.md), as it
// does for CI, or beside the local checkout this one was cloned from; rows whose code is
// "(Error body)" or "(per-minute)" name no code.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS } from '../src/errors.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const origin = (() => {
  try {
    return execFileSync('git', ['config', '--get', 'remote.origin.url'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const candidates = [join(root, '../shared/SPEC.md'), ...(origin.startsWith('/') ? [join(origin, '../shared/SPEC.md')] : [])];
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
