// What every inbound JSON value must satisfy before a validator, walker or database sees it:
// nesting no deeper than MAX_JSON_DEPTH (Ajv, the data walkers, structuredClone and
// JSON.stringify all recurse, and a deep enough value overflows the stack) and no NUL byte in
// any string or key (PostgreSQL refuses 0x00 in text, so a NUL would otherwise be a 500 on one
// database and stored on the other). Shared by the HTTP hooks and the MCP tool door.
import { checkName } from '../assets/validate.js';
import { errors, ServiceError, invalidField } from '../errors.js';

/** Levels of arrays and objects a request body (or an MCP tool's arguments) may nest. */
export const MAX_JSON_DEPTH = 64;

export type JsonPath = ReadonlyArray<string | number>;

/** Says whether the NUL found at `path` is in an asset file name (then SPEC §2.1's code applies). */
export type AssetNameAt = (path: JsonPath, inKey: boolean) => boolean;

/** The compile request: the keys of `assets` and the entries of `use_stored_assets` are file names. */
export const COMPILE_ASSET_NAMES: AssetNameAt = (path, inKey) =>
  path.length === 2 && ((path[0] === 'assets' && inKey) || path[0] === 'use_stored_assets');

/** A request whose one field `field` is an asset name (upload `name`, lookup `id_or_name`). */
export function assetNameField(field: string): AssetNameAt {
  return (path) => path.length === 1 && path[0] === field;
}

export type Problem = { kind: 'too_deep' } | { kind: 'nul'; path: JsonPath; inKey: boolean; text: string };

/** One open array or object on the walk: its entries and how far through them we are. */
interface Cursor {
  keys: string[] | null;
  values: unknown[];
  next: number;
  key: string | number | null;
}

function open(value: object, key: string | number | null): Cursor {
  if (Array.isArray(value)) return { keys: null, values: value, next: 0, key };
  const keys = Object.keys(value);
  return { keys, values: keys.map((k) => (value as Record<string, unknown>)[k]), next: 0, key };
}

function pathOf(stack: Cursor[], last: string | number): JsonPath {
  return [...stack.slice(1).map((cursor) => cursor.key as string | number), last];
}

/**
 * The first thing wrong with a parsed JSON value, or null. Iterative, holding only the containers
 * on the current path, so it is itself safe on any input; it stops at the first level past `maxDepth`.
 */
export function inspectJson(value: unknown, maxDepth = MAX_JSON_DEPTH): Problem | null {
  if (typeof value === 'string') return value.includes('\0') ? { kind: 'nul', path: [], inKey: false, text: value } : null;
  if (typeof value !== 'object' || value === null) return null;
  if (maxDepth < 1) return { kind: 'too_deep' };
  const stack: Cursor[] = [open(value, null)];
  while (stack.length > 0) {
    const cursor = stack[stack.length - 1] as Cursor;
    if (cursor.next >= cursor.values.length) {
      stack.pop();
      continue;
    }
    const index = cursor.next++;
    const key = cursor.keys ? (cursor.keys[index] as string) : index;
    if (typeof key === 'string' && key.includes('\0')) return { kind: 'nul', path: pathOf(stack, key), inKey: true, text: key };
    const item = cursor.values[index];
    if (typeof item === 'string') {
      if (item.includes('\0')) return { kind: 'nul', path: pathOf(stack, key), inKey: false, text: item };
    } else if (typeof item === 'object' && item !== null) {
      if (stack.length >= maxDepth) return { kind: 'too_deep' };
      stack.push(open(item, key));
    }
  }
  return null;
}

export function tooDeepError(what: string, maxDepth = MAX_JSON_DEPTH): ServiceError {
  return errors.json_too_deep(`${what} nests arrays and objects more than ${maxDepth} levels deep; send flatter JSON.`, {
    limit: maxDepth,
  });
}

/** A NUL byte in `text` at `path`: invalid_asset_filename in an asset name, else validation_failed naming the field. */
export function nulError(problem: { path: JsonPath; inKey: boolean; text: string }, assetNameAt?: AssetNameAt): ServiceError {
  if (assetNameAt?.(problem.path, problem.inKey)) {
    // SPEC §2.1's own rule, which refuses a NUL before anything else: it always throws here.
    try {
      checkName(problem.text);
    } catch (err) {
      if (err instanceof ServiceError) return err;
      throw err;
    }
  }
  const field = problem.path.join('.') || 'body';
  const message = 'must not contain a NUL byte (\\u0000)';
  return invalidField(field, 'no_nul', message, { message: `Request is invalid: ${JSON.stringify(field)} ${message}` });
}

/** Throws the catalogue error for the first problem of `value`, if any. */
export function assertSafeJson(value: unknown, options: { what: string; assetNameAt?: AssetNameAt; maxDepth?: number }): void {
  const problem = inspectJson(value, options.maxDepth);
  if (!problem) return;
  if (problem.kind === 'too_deep') throw tooDeepError(options.what, options.maxDepth);
  throw nulError(problem, options.assetNameAt);
}
