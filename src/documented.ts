// Request fields the service checks itself: SPEC names its own error code for a bad value
// (not_latex_source, invalid_color, ...), so the door's validator must let any JSON through,
// yet the OpenAPI document has to say what a valid request sends. `checkedByService(type)` is
// both: to the validator an annotation (the `x-documented` keyword, registered as one), to the
// document the type itself (documentedTypes swaps it in when the document is built).
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** The keyword carrying a field's documented type; the validators register it as an annotation. */
export const DOCUMENTED = 'x-documented';

/** A field any JSON may fill at the door, documented as `type` (its description and examples show). */
export function checkedByService<T extends TSchema>(type: T): TUnsafe<Static<T>> {
  const { description, examples } = type as { description?: string; examples?: unknown[] };
  return Type.Unsafe<Static<T>>({ description, ...(examples ? { examples } : {}), [DOCUMENTED]: type });
}

/** Replaces, in place, every `{x-documented: type}` in `doc` by its type. */
export function documentedTypes<T>(doc: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const record = node as Record<string, unknown>;
    if (DOCUMENTED in record) return visit(record[DOCUMENTED]);
    for (const [key, value] of Object.entries(record)) record[key] = visit(value);
    return record;
  };
  return visit(doc) as T;
}
