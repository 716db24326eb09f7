// The error catalogue against the contract (issue #14): every code SPEC §7 names is in
// src/errors.ts with SPEC's status. SPEC sits beside the checkout (../shared/SPEC.md), as it
// does for CI; rows whose code is "(Error body)" or "(per-minute)" name no code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS } from '../src/errors.js';

const spec = readFileSync(fileURLToPath(new URL('../../shared/SPEC.md', import.meta.url)), 'utf8');

test('every code in SPEC §7 is in the catalogue with the status SPEC gives it', () => {
  const section = spec.slice(spec.indexOf('## 7. Errors'), spec.indexOf('## 8. Limits'));
  const rows = [...section.matchAll(/^\| (\d{3}) \| ([a-z_]+) \|/gm)].map((m) => ({ code: m[2]!, status: Number(m[1]) }));
  assert.ok(rows.length >= 40, `read ${rows.length} coded rows from SPEC §7`);
  const catalogue: Record<string, number> = ERROR_STATUS;
  for (const { code, status } of rows) {
    assert.equal(catalogue[code], status, `${code}: SPEC says ${status}`);
  }
});
