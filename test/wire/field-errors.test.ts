// fieldErrors (src/wire/field-errors.ts) on the errors real Ajv reports with the options both
// doors validate with: each names the field by its path, the rule by Ajv's keyword (an unknown
// key is `unknown_field`), and the limit when the rule has one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import AjvModule from 'ajv';
import { fieldErrors, type AjvError } from '../../src/wire/field-errors.js';

const Ajv = AjvModule.default;
const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true, strict: false });

const Body = Type.Object(
  {
    name: Type.String({ maxLength: 3 }),
    tags: Type.Optional(Type.Array(Type.Object({ label: Type.String() }, { additionalProperties: false }))),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
const check = ajv.compile(JSON.parse(JSON.stringify(Body)) as object);

function errorsOf(value: unknown): AjvError[] {
  assert.equal(check(value), false, 'the value must be invalid');
  return check.errors ?? [];
}

describe('fieldErrors', () => {
  test('a missing property is named by itself, with rule "required"', () => {
    assert.deepEqual(fieldErrors(errorsOf({}), 'body'), [{ field: 'name', rule: 'required', message: "must have required property 'name'" }]);
  });

  test('an unknown key is rule "unknown_field" naming the key, nested keys by their dotted path', () => {
    assert.deepEqual(fieldErrors(errorsOf({ name: 'a', colour: 'red', tags: [{ label: 'x', extra: 1 }] }), 'body'), [
      { field: 'colour', rule: 'unknown_field', message: 'must NOT have additional properties' },
      { field: 'tags.0.extra', rule: 'unknown_field', message: 'must NOT have additional properties' },
    ]);
  });

  test('a rule with a limit carries it; every problem is listed', () => {
    assert.deepEqual(fieldErrors(errorsOf({ name: 'long', count: 0 }), 'body'), [
      { field: 'name', rule: 'maxLength', limit: 3, message: 'must NOT have more than 3 characters' },
      { field: 'count', rule: 'minimum', limit: 1, message: 'must be >= 1' },
    ]);
  });

  test('a problem with no path is named by its context, and "body" when none is given', () => {
    const whole: AjvError = { instancePath: '', keyword: 'type', message: 'must be object' };
    assert.deepEqual(fieldErrors([whole], 'querystring'), [{ field: 'querystring', rule: 'type', message: 'must be object' }]);
    assert.deepEqual(fieldErrors([whole], 'body'), [{ field: 'body', rule: 'type', message: 'must be object' }]);
    assert.deepEqual(fieldErrors([whole]), [{ field: 'body', rule: 'type', message: 'must be object' }]);
  });

  test('an error without a message or path still names a field and says it is invalid', () => {
    assert.deepEqual(fieldErrors([{ keyword: 'format' }], 'params'), [{ field: 'params', rule: 'format', message: 'is invalid' }]);
  });
});
