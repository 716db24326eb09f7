// Render data checked against a template's derived schema before anything compiles, so a
// caller learns every missing field and wrong type at once and pays nothing for the mistake.
import type { JsonSchema } from './schema.js';

export interface DataProblems {
  missing_fields: string[];
  type_errors: Array<{ field: string; expected: string; got: string }>;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isDate(value: unknown): boolean {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value));
}

function matches(type: string, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeName(value) === 'object';
    default:
      return typeName(value) === type;
  }
}

function expectedOf(schema: JsonSchema): string {
  if (schema.format === 'date') return 'date (ISO 8601 string, e.g. "2026-01-15")';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'any'];
  return types.join(' or ');
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function check(schema: JsonSchema, value: unknown, path: string, out: DataProblems): void {
  const types = schema.type === undefined ? null : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types && !types.some((t) => matches(t, value))) {
    out.type_errors.push({ field: path || '(data)', expected: expectedOf(schema), got: typeName(value) });
    return;
  }
  if (schema.format === 'date' && !isDate(value)) {
    out.type_errors.push({ field: path, expected: expectedOf(schema), got: typeof value === 'string' ? 'string (not a date)' : typeName(value) });
    return;
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => check(schema.items!, item, `${path}[${i}]`, out));
    return;
  }
  if (typeName(value) === 'object' && schema.properties) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (record[key] === undefined || record[key] === null) out.missing_fields.push(join(path, key));
    }
    for (const [key, sub] of Object.entries(schema.properties)) {
      const field = record[key];
      if (field === undefined || (field === null && !(schema.required ?? []).includes(key))) continue;
      if (field === null) continue;
      check(sub, field, join(path, key), out);
    }
  }
}

/** Null when `data` fits `schema`; otherwise every missing field and type mismatch. */
export function validateData(schema: JsonSchema, data: unknown): DataProblems | null {
  const out: DataProblems = { missing_fields: [], type_errors: [] };
  check(schema, data, '', out);
  return out.missing_fields.length || out.type_errors.length ? out : null;
}

/** The compiler a rendered document needs: \directlua → lualatex, fontspec → xelatex. */
export function chooseCompiler(renderedLatex: string): 'pdflatex' | 'xelatex' | 'lualatex' {
  const code = renderedLatex.replace(/(?<!\\)%.*$/gm, '');
  if (/\\directlua\b|\\begin\{luacode\*?\}|\\usepackage(\[[^\]]*\])?\{[^}]*\bluacode\b/.test(code)) return 'lualatex';
  if (/\\(usepackage|RequirePackage)\s*(\[[^\]]*\])?\s*\{[^}]*\b(fontspec|unicode-math|polyglossia)\b/.test(code)) {
    return 'xelatex';
  }
  return 'pdflatex';
}
