// The cap on a render's `data`: measured as the UTF-8 size of its JSON text, without building
// that text, and given up as soon as the cap is passed, so a 100 MB value costs one pass over
// at most the cap's worth of characters before it is refused.
import { errors } from '../errors.js';
import { PLAN_NAMES, PLANS } from '../quota/plans.js';

/** Largest serialized `data` of one render (V2 render, gallery render, MCP render): the largest plan's source limit. */
export const RENDER_DATA_MAX_BYTES = Math.max(...PLAN_NAMES.map((plan) => PLANS[plan].maxLatexBytes));

/** The JSON size of `value` in bytes, or `limit + 1` once it is known to be larger. */
export function jsonSizeUpTo(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      // Each character is at least one byte, so a long string is over without encoding it.
      if (size + item.length + 2 > limit) return limit + 1;
      size += Buffer.byteLength(JSON.stringify(item));
    } else if (typeof item === 'number' || typeof item === 'boolean' || item === null) {
      size += String(item).length;
    } else if (Array.isArray(item)) {
      size += 2 + Math.max(0, item.length - 1);
      if (size > limit) return limit + 1;
      for (const element of item) stack.push(element === undefined ? null : element);
    } else if (typeof item === 'object' && item !== undefined) {
      const keys = Object.keys(item);
      size += 2 + Math.max(0, keys.length - 1) + keys.length; // braces, commas, colons
      if (size > limit) return limit + 1;
      for (const key of keys) {
        const element = (item as Record<string, unknown>)[key];
        if (element === undefined) continue;
        stack.push(key, element);
      }
    }
    if (size > limit) return limit + 1;
  }
  return size;
}

/** Throws data_too_large (413) when `data` serializes to more than RENDER_DATA_MAX_BYTES. */
export function checkDataSize(data: unknown, limit = RENDER_DATA_MAX_BYTES): void {
  const size = jsonSizeUpTo(data, limit);
  if (size > limit) {
    throw errors.data_too_large(
      `"data" is larger than ${limit} bytes as JSON; send less data per render (nothing was rendered or charged).`,
      { limit_bytes: limit },
    );
  }
}
