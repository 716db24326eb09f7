// Checking a JSON value against a TypeBox schema with the options buildApp gives Fastify's
// validator (bodies checked as sent, every problem reported), so a tool's arguments meet the
// same rules as its route's body; the check is a type guard, so a checked value is typed.
import type { TSchema } from '@sinclair/typebox';
import AjvModule, { type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationFailed } from '../errors.js';
import { fieldErrors } from '../wire/field-errors.js';

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
const ajv = addFormats(new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true, strict: false }));

/** Plain JSON Schema (TypeBox's symbol keys dropped), as sent in tools/list. */
export function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export interface Guard<T> {
  /** Whether `value` fits the schema. */
  is: ValidateFunction<T>;
  /** `value` as the schema's type, or validation_failed naming each bad field. */
  strict<V>(value: V): V & T;
}

export function guard<T>(schema: TSchema): Guard<T> {
  const is = ajv.compile<T>(plain(schema));
  return {
    is,
    strict(value) {
      if (is(value)) return value;
      throw validationFailed(fieldErrors(is.errors ?? [], 'body'), { lead: 'Arguments are invalid' });
    },
  };
}
