// Render data of saved templates checked against their derived schema before anything
// compiles, so a caller learns every missing field and wrong type at once and pays nothing for
// the mistake. The validator is the one of every render (data-schema.ts); this is its wording
// for saved templates: a null is a value left out, and a date is any ISO 8601 date or time.
import { DataValidator, type DataProblems, type JsonSchema } from './data-schema.js';

export type { DataProblems };

const DATE_EXPECTED = 'date (ISO 8601 string, e.g. "2026-01-15")';

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const saved = new DataValidator({
  isDate: (value) => /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value)),
  dateExpected: DATE_EXPECTED,
  notADate: () => 'string (not a date)',
  typeName,
  typeExpected: (schema) => (schema.format === 'date' ? DATE_EXPECTED : [schema.type ?? 'any'].flat().join(' or ')),
  absent: (value) => value === null,
});

/** Null when `data` fits `schema`; otherwise every missing field and type mismatch. */
export function validateData(schema: JsonSchema, data: unknown): DataProblems | null {
  return saved.validate(schema, data);
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
