// Render data against a template's JSON Schema: the one validator of saved (derived schema) and
// gallery (hand-written schema) renders, on Ajv. The schema is the authority: nothing that
// fails it reaches Liquid or TeX, and the caller learns every missing field and every wrong
// value at once. Only the wording of a problem differs between the two kinds of template (their
// bodies are part of the contract), and how strictly a `date` is read.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * The one JSON Schema type: derived schemas use the named keywords, gallery schemas any. A type
 * alias (not an interface) so it is assignable to Record<string, unknown> in wire schemas.
 */
export type JsonSchema = {
  $schema?: string;
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean;
  [keyword: string]: unknown;
};

export interface TypeError {
  field: string;
  expected: string;
  got: string;
}

export interface DataProblems {
  missing_fields: string[];
  type_errors: TypeError[];
}

/** How one kind of template words its problems (and reads a date). */
export interface Dialect {
  /** Whether a string is a valid `format: date` (ajv-formats' full-date when not given). */
  isDate?(value: string): boolean;
  /** `expected` of a string that is not a date. */
  dateExpected: string;
  /** `got` of a string that is not a date. */
  notADate(value: string): string;
  /** `got` of a value of the wrong type. */
  typeName(value: unknown): string;
  /** `expected` of a value of the wrong type, from the schema it broke. */
  typeExpected(schema: JsonSchema): string;
  /** Values read as left out (a required one is missing, an optional one fine); none when not given. */
  absent?(value: unknown): boolean;
}

/** JSON's name of a value's type, telling integers from other numbers. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Compiled schemas kept, by their JSON text (saved templates' schemas are parsed per render). */
const CACHE_LIMIT = 500;

/** `/items/0/quantity` → `items[0].quantity`. */
function fieldName(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const part of pointer.split('/').slice(1)) value = (value as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return value;
}

/** `data` without the object properties the dialect reads as left out (arrays keep their items). */
function withoutAbsent(data: unknown, absent: (value: unknown) => boolean): unknown {
  if (Array.isArray(data)) return data.map((item) => withoutAbsent(item, absent));
  if (data === null || typeof data !== 'object') return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (!absent(value)) out[key] = withoutAbsent(value, absent);
  }
  return out;
}

export class DataValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly dialect: Dialect) {
    // verbose: each error names the schema it broke, which the wording of a type error reads.
    this.ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
    // ajv-formats is CommonJS: under NodeNext its function is the default export's `default`.
    addFormatsModule.default(this.ajv);
    const isDate = dialect.isDate;
    if (isDate) this.ajv.addFormat('date', { type: 'string', validate: (value: string) => isDate(value) });
  }

  private validator(schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      // Ajv keeps every schema object it compiled; the text-keyed cache here is the bounded one.
      this.ajv.removeSchema(schema);
      if (this.compiled.size >= CACHE_LIMIT) this.compiled.delete(this.compiled.keys().next().value!);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private expectation(err: ErrorObject): string {
    const p = err.params as Record<string, unknown>;
    switch (err.keyword) {
      case 'type': return this.dialect.typeExpected(err.parentSchema as JsonSchema);
      case 'minLength': return p.limit === 1 ? 'non-empty string' : `string of at least ${String(p.limit)} characters`;
      case 'maxLength': return `string of at most ${String(p.limit)} characters`;
      case 'minItems': return `array of at least ${String(p.limit)} items`;
      case 'maxItems': return `array of at most ${String(p.limit)} items`;
      case 'minimum': return `number ≥ ${String(p.limit)}`;
      case 'maximum': return `number ≤ ${String(p.limit)}`;
      case 'pattern': return `string matching ${String(p.pattern)}`;
      case 'format': return p.format === 'date' ? this.dialect.dateExpected : String(p.format);
      case 'enum': return `one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
      default: return err.message ?? err.keyword;
    }
  }

  private got(err: ErrorObject, value: unknown): string {
    if (err.keyword === 'type') return this.dialect.typeName(value);
    if (err.keyword === 'format' && (err.params as { format?: string }).format === 'date' && typeof value === 'string') return this.dialect.notADate(value);
    if (typeof value === 'string') return `string of ${value.length} characters`;
    if (Array.isArray(value)) return `array of ${value.length} items`;
    return JSON.stringify(value).slice(0, 60);
  }

  /** Problems with `data`, or null when it satisfies the schema. */
  validate(schema: JsonSchema, input: unknown): DataProblems | null {
    const validate = this.validator(schema);
    const absent = this.dialect.absent;
    const data = absent ? withoutAbsent(input, (value) => absent(value)) : input;
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
      typeErrors.set(field, { field, expected: this.expectation(err), got: this.got(err, valueAt(data, err.instancePath)) });
    }
    return { missing_fields: [...missing], type_errors: [...typeErrors.values()] };
  }
}
