// The error catalogue itself (issue #14): every code has a status, a default message, explicit
// MCP advice (or an explicit none) and a retryable class; the factories build exactly the
// catalogue's errors; Retry-After is derived from retry_after_seconds in one place; and no
// module outside src/errors.ts builds an error or a Retry-After header by hand.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  CATALOGUE,
  ERROR_CODES,
  ERROR_STATUS,
  ServiceError,
  adviceFor,
  errors,
  fail,
  invalidField,
  isErrorCode,
  restore,
  retryAfterHeader,
  validationFailed,
  type FactoryCode,
} from '../src/errors.js';
import { failureText } from '../src/mcp/results.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Builds `code` through its factory with `details`, whatever fields the code's type asks for. */
function build(code: FactoryCode, details: Record<string, unknown>, message?: string): ServiceError {
  const factory = errors[code] as (message?: string, details?: Record<string, unknown>) => ServiceError;
  return factory(message, details);
}

describe('error catalogue', () => {
  test('every code has a status, a default message, a retryable class and explicit advice (or explicit none)', () => {
    assert.ok(ERROR_CODES.length >= 80, `${ERROR_CODES.length} codes`);
    for (const code of ERROR_CODES) {
      const row = CATALOGUE[code];
      assert.match(code, /^[a-z][a-z0-9_]*$/, code);
      assert.ok(Number.isInteger(row.status) && row.status >= 400 && row.status <= 599, `${code}: status ${row.status}`);
      assert.equal(ERROR_STATUS[code], row.status, `${code}: ERROR_STATUS agrees`);
      assert.ok(typeof row.message === 'string' && row.message.length > 0 && /[.)]$/.test(row.message), `${code}: default message ${row.message}`);
      assert.ok(row.retryable === true || row.retryable === false || row.retryable === 'body', `${code}: retryable ${String(row.retryable)}`);
      assert.ok(Object.hasOwn(row, 'advice'), `${code}: advice is stated (a string or null)`);
      assert.ok(row.advice === null || (typeof row.advice === 'string' && row.advice.length > 0), `${code}: advice`);
    }
    assert.deepEqual(Object.keys(ERROR_STATUS), ERROR_CODES);
  });

  test('each factory builds its code with the catalogue status, the given message or the default, and the fields as given', () => {
    for (const code of ERROR_CODES) {
      if (code === 'validation_failed') {
        assert.equal((errors as Record<string, unknown>)[code], undefined, 'validation_failed has no factory');
        continue;
      }
      const given = build(code, { limit: 3, plan: 'pro' }, `About ${code}.`);
      assert.ok(given instanceof ServiceError);
      assert.equal(given.code, code);
      assert.equal(given.status, CATALOGUE[code].status);
      assert.deepEqual(given.body(), { error: code, message: `About ${code}.`, limit: 3, plan: 'pro' });
      assert.deepEqual(given.headers, {});
      const bare = build(code, {});
      assert.deepEqual(bare.body(), { error: code, message: CATALOGUE[code].message });
    }
  });

  test('validation_failed is built by validationFailed()/invalidField() alone, with the catalogue status', () => {
    const err = invalidField('latex', 'type', 'must be a string');
    assert.equal(err.status, 422);
    assert.deepEqual(err.body(), {
      error: 'validation_failed',
      message: 'Request is invalid: latex must be a string',
      fields: [{ field: 'latex', rule: 'type', message: 'must be a string' }],
    });
    assert.equal(validationFailed([], { message: 'Nope.' }).message, 'Nope.');
  });

  test('retry_after_seconds sends Retry-After, unless the body says retryable: false; other headers pass through', () => {
    for (const code of ERROR_CODES.filter((c): c is FactoryCode => c !== 'validation_failed')) {
      assert.deepEqual(build(code, { retryable: true, retry_after_seconds: 7 }).headers, { 'retry-after': '7' }, code);
      assert.deepEqual(build(code, { retry_after_seconds: 0 }).headers, { 'retry-after': '0' }, code);
      assert.deepEqual(build(code, { retryable: false, retry_after_seconds: 86_400 }).headers, {}, `${code}: a used-up quota`);
      assert.deepEqual(build(code, { retryable: true, retry_after_seconds: '7' }).headers, {}, `${code}: not a number`);
    }
    assert.deepEqual(retryAfterHeader({ retryable: true }), {});
    const busy = errors.server_busy('Busy.', { retryable: true, retry_after_seconds: 2 });
    assert.deepEqual(busy.body(), { error: 'server_busy', message: 'Busy.', retryable: true, retry_after_seconds: 2 });
    assert.deepEqual(busy.headers, { 'retry-after': '2' });
    assert.deepEqual(errors.method_not_allowed('No.', {}, { allow: 'POST' }).headers, { allow: 'POST' });
    const storage = fail('storage_unavailable', undefined, { retryable: true, retry_after_seconds: 5 });
    assert.equal(storage.status, 503);
    assert.equal(storage.message, CATALOGUE.storage_unavailable.message);
    assert.deepEqual(storage.headers, { 'retry-after': '5' });
  });

  test('withDetails and restore keep code, status, message and the derived header', () => {
    const full = errors.idempotency_key_in_progress('Wait.', { idempotency_key: 'k', retryable: true, retry_after_seconds: 1 });
    const more = full.withDetails({ usage: { used: 1 } });
    assert.deepEqual(more.body(), { ...full.body(), usage: { used: 1 } });
    assert.equal(more.status, 409);
    assert.deepEqual(more.headers, { 'retry-after': '1' });
    const back = restore('idempotency_key_in_progress', full.message, full.details);
    assert.deepEqual([back.status, back.body(), back.headers], [full.status, full.body(), full.headers]);
  });

  test('MCP shows the catalogue advice, else "transient" for retryable or 5xx errors, else nothing', () => {
    const transient = 'This is transient: retry the same call later.';
    for (const code of ERROR_CODES) {
      const body = { error: code, message: 'M.' };
      const text = failureText(body, CATALOGUE[code].status);
      const advice = CATALOGUE[code].advice;
      if (advice !== null) assert.ok(text.endsWith(`\n${advice}`), `${code}: ${text}`);
      else if (CATALOGUE[code].status >= 500) assert.ok(text.endsWith(`\n${transient}`), `${code}: ${text}`);
      else assert.equal(text, `Error ${code}: M.`, code);
      assert.equal(adviceFor(code), advice ?? undefined);
    }
    assert.ok(failureText({ error: 'render_failed', message: 'M.', retryable: true }).endsWith(`\n${transient}`));
    for (const unknown of ['constructor', 'toString', '__proto__', 'no_such_code']) {
      assert.equal(isErrorCode(unknown), false, unknown);
      assert.equal(adviceFor(unknown), undefined, unknown);
    }
  });

  test('no module outside src/errors.ts constructs a ServiceError or writes a Retry-After header', () => {
    const offenders = sourceFiles(join(root, 'src'))
      .filter((path) => !path.endsWith(join('src', 'errors.ts')))
      .filter((path) => /new ServiceError\(|'retry-after'/i.test(readFileSync(path, 'utf8')));
    assert.deepEqual(offenders, []);
  });

  test('the factories are typed per code (checked by tsc)', () => {
    // @ts-expect-error rate_limit_exceeded needs its fields (limit, used, resets_at, …)
    assert.equal(errors.rate_limit_exceeded('x', {}).status, 429);
    // @ts-expect-error server_busy needs retryable and retry_after_seconds
    assert.equal(errors.server_busy('Busy.').status, 503);
    // @ts-expect-error invalid_json carries no fields
    assert.equal(errors.invalid_json('Bad.', { limit: 1 }).status, 400);
    // @ts-expect-error validation_failed has no factory
    assert.equal(errors.validation_failed, undefined);
    assert.equal(errors.not_found().message, CATALOGUE.not_found.message);
  });
});
