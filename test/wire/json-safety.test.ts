// The JSON edge checks both doors run on a body or a tool's arguments (src/wire/json-safety.ts): which
// paths hold asset names, which catalogue error each problem becomes, and (a property) that
// inspectJson agrees with a plain recursive walk on any JSON value. The attacks through the
// real doors are in test/security/edge.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors.js';
import { assertSafeJson, assetNameField, COMPILE_ASSET_NAMES, inspectJson, MAX_JSON_DEPTH, type JsonPath } from '../../src/wire/json-safety.js';

function refusal(run: () => void): ServiceError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ServiceError, String(err));
    return err;
  }
  assert.fail('the value was accepted');
}

function nested(levels: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

/** Reference: levels of arrays and objects, and the first NUL in depth-first key/value order. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => (!Array.isArray(value) && key.includes('\0')) || hasNul(item));
}

describe('which paths hold asset names', () => {
  test('the compile request: keys of assets and entries of use_stored_assets, nothing else', () => {
    const cases: Array<[JsonPath, boolean, boolean]> = [
      [['assets', 'logo.png'], true, true],
      [['assets', 'logo.png'], false, false],
      [['use_stored_assets', 0], false, true],
      [['latex'], false, false],
      [['assets'], true, false],
      [['assets', 'x', 'y'], true, false],
      [['options', 'assets'], true, false],
    ];
    for (const [path, inKey, expected] of cases) assert.equal(COMPILE_ASSET_NAMES(path, inKey), expected, `${path.join('.')} inKey=${inKey}`);
  });

  test('a one-field request: exactly that top-level field', () => {
    const name = assetNameField('name');
    assert.equal(name(['name'], false), true);
    assert.equal(name(['data'], false), false);
    assert.equal(name(['data', 'name'], false), false);
  });
});

describe('assertSafeJson', () => {
  test('flat, NUL-free JSON passes', () => {
    assertSafeJson({ latex: 'x', assets: { 'a.png': 'AA==' }, list: [1, null, true] }, { what: 'The request body' });
    assertSafeJson(nested(MAX_JSON_DEPTH), { what: 'The request body' });
  });

  test('one level too deep is 400 json_too_deep with the limit; maxDepth moves the limit', () => {
    const err = refusal(() => assertSafeJson(nested(MAX_JSON_DEPTH + 1), { what: 'The request body' }));
    assert.equal(err.status, 400);
    assert.deepEqual(err.body(), {
      error: 'json_too_deep',
      message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; send flatter JSON.`,
      limit: MAX_JSON_DEPTH,
    });
    const small = refusal(() => assertSafeJson(nested(3), { what: 'The arguments', maxDepth: 2 }));
    assert.deepEqual(small.body(), { error: 'json_too_deep', message: 'The arguments nests arrays and objects more than 2 levels deep; send flatter JSON.', limit: 2 });
  });

  test('a NUL outside an asset name is validation_failed naming the field by its path', () => {
    const err = refusal(() => assertSafeJson({ data: { rows: ['ok', 'b\0d'] } }, { what: 'The request body', assetNameAt: COMPILE_ASSET_NAMES }));
    assert.equal(err.status, 422);
    assert.deepEqual(err.body(), {
      error: 'validation_failed',
      message: 'Request is invalid: "data.rows.1" must not contain a NUL byte (\\u0000)',
      fields: [{ field: 'data.rows.1', rule: 'no_nul', message: 'must not contain a NUL byte (\\u0000)' }],
    });
    const whole = refusal(() => assertSafeJson('a\0', { what: 'The request body' }));
    assert.deepEqual((whole.body().fields as Array<{ field: string }>).map((f) => f.field), ['body']);
  });

  test('a NUL in an asset name is invalid_asset_filename, in a key or in a list entry', () => {
    const inKey = refusal(() => assertSafeJson({ assets: { 'lo\0go.png': 'AA==' } }, { what: 'The request body', assetNameAt: COMPILE_ASSET_NAMES }));
    assert.equal(inKey.code, 'invalid_asset_filename');
    assert.equal(inKey.body().asset, 'lo\0go.png');
    const inList = refusal(() => assertSafeJson({ use_stored_assets: ['ok.png', 'b\0d.png'] }, { what: 'The request body', assetNameAt: COMPILE_ASSET_NAMES }));
    assert.equal(inList.code, 'invalid_asset_filename');
    const upload = refusal(() => assertSafeJson({ name: 'x\0.png' }, { what: 'The request body', assetNameAt: assetNameField('name') }));
    assert.equal(upload.code, 'invalid_asset_filename');
    // Without a rule for asset names the same key is an ordinary field.
    assert.equal(refusal(() => assertSafeJson({ name: 'x\0.png' }, { what: 'The request body' })).code, 'validation_failed');
  });
});

describe('inspectJson', () => {
  test('agrees with a recursive walk on any JSON value (property)', () => {
    const withNul = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('\0', 'a\0b'));
    const { value } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        withNul,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(withNul, tie('value'), { maxKeys: 3 }),
      ),
    }));
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 6 }), (json, maxDepth) => {
        const problem = inspectJson(json, maxDepth);
        const tooDeep = depthOf(json) > maxDepth;
        if (!tooDeep && !hasNul(json)) assert.equal(problem, null);
        else if (!hasNul(json)) assert.deepEqual(problem, { kind: 'too_deep' });
        else if (!tooDeep) assert.equal(problem?.kind, 'nul');
        else assert.notEqual(problem, null);
        if (problem?.kind === 'nul') {
          // The path leads to the text it names.
          let at: unknown = json;
          for (const step of problem.inKey ? problem.path.slice(0, -1) : problem.path) at = (at as Record<string | number, unknown>)[step];
          if (problem.inKey) assert.ok(Object.keys(at as object).includes(problem.text));
          else assert.equal(at, problem.text);
          assert.ok(problem.text.includes('\0'));
        }
      }),
      { numRuns: 500 },
    );
  });
});
