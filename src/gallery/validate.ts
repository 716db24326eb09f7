// Public render data against the template's hand-written JSON Schema (the schema is the
// authority: nothing that fails it reaches Liquid or TeX).
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from './catalog.js';

export interface TypeError {
  field: string;
  expected: string;
  got: string;
}

export interface DataProblems {
  missing_fields: string[];
  type_errors: TypeError[];
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
// ajv-formats is CommonJS: under NodeNext its function is the default export's `default`.
addFormatsModule.default(ajv);
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validator(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** `/items/0/quantity` → `items[0].quantity`. */
function fieldName(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const part of pointer.split('/').slice(1)) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

function expectation(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'type': return String(p.type);
    case 'minLength': return p.limit === 1 ? 'non-empty string' : `string of at least ${String(p.limit)} characters`;
    case 'maxLength': return `string of at most ${String(p.limit)} characters`;
    case 'minItems': return `array of at least ${String(p.limit)} items`;
    case 'maxItems': return `array of at most ${String(p.limit)} items`;
    case 'minimum': return `number ≥ ${String(p.limit)}`;
    case 'maximum': return `number ≤ ${String(p.limit)}`;
    case 'pattern': return `string matching ${String(p.pattern)}`;
    case 'format': return p.format === 'date' ? 'date (YYYY-MM-DD)' : String(p.format);
    case 'enum': return `one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    default: return err.message ?? err.keyword;
  }
}

/** Problems with `data`, or null when it satisfies the schema. */
export function validateGalleryData(schema: JsonSchema, data: Record<string, unknown>): DataProblems | null {
  const validate = validator(schema);
  if (validate(data)) return null;
  const missing = new Set<string>();
  const typeErrors = new Map<string, TypeError>();
  for (const err of validate.errors ?? []) {
    if (err.keyword === 'required') {
      missing.add(fieldName(err.instancePath, String((err.params as { missingProperty: string }).missingProperty)));
      continue;
    }
    const field = fieldName(err.instancePath) || '(data)';
    // One entry per field: the type mismatch wins over the constraints it makes moot.
    if (typeErrors.has(field) && err.keyword !== 'type') continue;
    const value = valueAt(data, err.instancePath);
    const got = err.keyword === 'type' ? jsonType(value) : typeof value === 'string' ? `string of ${value.length} characters` : Array.isArray(value) ? `array of ${value.length} items` : JSON.stringify(value).slice(0, 60);
    typeErrors.set(field, { field, expected: expectation(err), got });
  }
  return { missing_fields: [...missing], type_errors: [...typeErrors.values()] };
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
