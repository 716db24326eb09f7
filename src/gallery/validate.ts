// Public render data against the template's hand-written JSON Schema (the schema is the
// authority: nothing that fails it reaches Liquid or TeX), through the one validator of every
// render (templates/data-schema.ts) in the gallery's wording; and the gallery's treatment of
// blank optional values before and after it.
import { DataValidator, jsonType, type DataProblems, type JsonSchema } from '../templates/data-schema.js';

export { jsonType, type DataProblems };

const gallery = new DataValidator({
  dateExpected: 'date (YYYY-MM-DD)',
  notADate: (value) => `string of ${value.length} characters`,
  typeName: jsonType,
  typeExpected: (schema) => String(schema.type),
});

/** Problems with `data`, or null when it satisfies the schema. */
export function validateGalleryData(schema: JsonSchema, data: Record<string, unknown>): DataProblems | null {
  return gallery.validate(schema, data);
}

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown>)[part];
  return { ...(target as JsonSchema), ...schema, $ref: undefined };
}

/** Walks `data` along `schema` and lets `blank` decide what an optional field left blank becomes. */
function mapOptionals(
  schema: JsonSchema,
  data: unknown,
  root: JsonSchema,
  isBlank: (value: unknown) => boolean,
  blank: (out: Record<string, unknown>, key: string) => void,
): unknown {
  const s = resolve(schema, root);
  if (Array.isArray(data)) {
    const items = s.items as JsonSchema | undefined;
    return items ? data.map((item) => mapOptionals(items, item, root, isBlank, blank)) : data;
  }
  if (data === null || typeof data !== 'object') return data;
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  for (const [key, sub] of Object.entries(properties)) {
    const value = out[key];
    if (isBlank(value) && !required.has(key)) blank(out, key);
    else if (value !== undefined) out[key] = mapOptionals(sub, value, root, isBlank, blank);
  }
  return out;
}

const blankString = (value: unknown) => typeof value === 'string' && value.trim() === '';

/**
 * The caller's data with blank optional values (null, "" or spaces) removed, so
 * `"due_date": ""` means "no due date" rather than an invalid date. Required fields are left alone for the schema to judge.
 */
export function dropBlankOptionals(schema: JsonSchema, data: unknown): unknown {
  return mapOptionals(schema, data, schema, (v) => v === null || blankString(v), (out, key) => delete out[key]);
}

/**
 * Valid data made easy for a template: every optional field the caller left out or left
 * blank becomes null, so `{% if field %}` works under strict variables and an empty string
 * never prints an empty section.
 */
export function normaliseData(schema: JsonSchema, data: unknown): unknown {
  return mapOptionals(schema, data, schema, (v) => v === undefined || blankString(v), (out, key) => (out[key] = null));
}
