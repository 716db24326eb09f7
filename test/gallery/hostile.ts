// Hostile gallery data, shaped by a template's schema (shared by the typesetting test and
// by anyone who wants to look at the result).
import type { JsonSchema } from '../../src/gallery/catalog.js';

/** Short tokens that must survive escaping and typesetting literally. */
export const TOKENS = ['A&B', '50%', '$5', '#1', '_x_', '{y}', '~z^', '\\w', '<q>', '|p|', '"d"', "'e'", '--', '...'];
const HOSTILE = `${TOKENS.join(' ')} Zürich naïve façade `;

function hostileString(max: number): string {
  const limit = Math.min(max, 2000);
  return HOSTILE.repeat(Math.ceil(limit / HOSTILE.length)).slice(0, limit);
}

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown>)[part];
  return { ...(target as JsonSchema), ...schema };
}

/**
 * Data shaped by the schema from a valid example: strings become hostile (or stay as in the
 * example where a pattern or format rules them), numbers stay valid, lists of objects grow
 * to 60, and with `minimal` every optional field is left out or empty.
 */
export function shaped(schema: JsonSchema, example: unknown, root: JsonSchema, minimal: boolean): unknown {
  const s = resolve(schema, root);
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('object') && example && typeof example === 'object' && !Array.isArray(example)) {
    const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((s.required ?? []) as string[]);
    const out: Record<string, unknown> = {};
    let i = 0;
    for (const [key, sub] of Object.entries(properties)) {
      const value = (example as Record<string, unknown>)[key];
      if (key === 'logo') continue;
      if (!required.has(key) && minimal) {
        if (i++ % 2 === 0 && resolve(sub, root).type === 'string') out[key] = '';
        continue;
      }
      if (value === undefined) continue;
      out[key] = shaped(sub, value, root, minimal);
    }
    return out;
  }
  if (types.includes('array') && Array.isArray(example)) {
    const items = resolve((s.items ?? {}) as JsonSchema, root);
    if (example.length === 0) return example;
    const count = minimal ? Math.max(1, Number(s.minItems ?? 1)) : items.type === 'object' ? 60 : Math.min(example.length + 2, Number(s.maxItems ?? 8));
    return Array.from({ length: Math.min(count, Number(s.maxItems ?? count)) }, (_, n) =>
      shaped(items, example[n % example.length], root, minimal),
    );
  }
  if (typeof example === 'string' && types.includes('string')) {
    if (s.pattern || s.format) return example;
    return minimal ? example : hostileString(Number(s.maxLength ?? 2000));
  }
  return example;
}

