// output.einvoice.from_data (issue 41): on a render, the invoice is derived from the render's own
// `data` by a small declarative mapping instead of being sent twice. The mapping is the invoice
// shape (model.ts) with some values replaced by references into the data; no expressions, no
// Liquid (whose escaping is for LaTeX, not JSON), so the result is plain JSON the invoice schema
// then checks like one sent whole (docs/einvoice.md "From a template's data"):
//   "$.seller.name"                    the value at that path of `data` ("$.items[0].unit_price")
//   "@.quantity"                       inside $each: the value at that path of the current item
//   {"$each": "$.items", "map": {…}}   an array: `map` once per element of that array
//   {"$if": "$.discount", "then": …}   `then` when the path has a value, else the field is left out
//   anything else                      itself (a literal: "S", 19, "DE")
// A path with no value leaves its field out, so an optional field of the data stays optional.
import { validationFailed } from '../errors.js';

type Value = unknown;
const MAX_DEPTH = 20;
const MAX_NODES = 100_000;

/** The value at `path` ("a.b[2].c") below `root`, or undefined. */
export function at(root: Value, path: string): Value {
  let current = root;
  for (const part of path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, part)) return undefined;
    current = (current as Record<string, Value>)[part];
  }
  return current;
}

const isRef = (v: Value): v is string => typeof v === 'string' && /^[$@](\.|\[|$)/.test(v);

/** The invoice `mapping` describes, its references resolved against `data`. */
export function invoiceFromData(mapping: Value, data: Value): Value {
  let nodes = 0;
  const resolve = (node: Value, item: Value, depth: number, where: string): Value => {
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) throw validationFailed([{ field: 'output.einvoice.from_data', rule: 'size', message: `a mapping may nest ${MAX_DEPTH} deep and produce ${MAX_NODES} values` }]);
    if (isRef(node)) {
      const root = node.startsWith('@') ? item : data;
      return at(root, node.slice(1).replace(/^\./, ''));
    }
    if (Array.isArray(node)) return node.map((n, i) => resolve(n, item, depth + 1, `${where}[${i}]`)).filter((v) => v !== undefined);
    if (node === null || typeof node !== 'object') return node;
    const record = node as Record<string, Value>;
    if ('$each' in record) {
      const list = isRef(record.$each) ? resolve(record.$each, item, depth + 1, where) : undefined;
      if (list === undefined) return undefined;
      if (!Array.isArray(list)) throw validationFailed([{ field: `output.einvoice.from_data${where}`, rule: 'each', message: `${String(record.$each)} is not an array in data` }]);
      return list.map((element, i) => resolve(record.map, element, depth + 1, `${where}[${i}]`));
    }
    if ('$if' in record) {
      const test = isRef(record.$if) ? resolve(record.$if, item, depth + 1, where) : record.$if;
      return test === undefined || test === null || test === false || test === 0 || test === '' ? undefined : resolve(record.then, item, depth + 1, where);
    }
    const out: Record<string, Value> = {};
    for (const [key, value] of Object.entries(record)) {
      const resolved = resolve(value, item, depth + 1, `${where}.${key}`);
      if (resolved !== undefined) out[key] = resolved;
    }
    return out;
  };
  return resolve(mapping, undefined, 0, '');
}

/**
 * A render's `output` with `einvoice.from_data` replaced by the invoice it gives for `data`;
 * anything else unchanged. The compile then checks that invoice against the invoice schema.
 */
export function withInvoiceFromData(output: unknown, data: unknown): unknown {
  if (typeof output !== 'object' || output === null) return output;
  const einvoice = (output as { einvoice?: unknown }).einvoice;
  if (typeof einvoice !== 'object' || einvoice === null || !('from_data' in einvoice)) return output;
  const { from_data: mapping, ...rest } = einvoice as { from_data: unknown } & Record<string, unknown>;
  return { ...output, einvoice: { ...rest, invoice: invoiceFromData(mapping, data) } };
}
