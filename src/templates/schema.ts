// Schema derivation: walks a template's Liquid syntax tree and infers the data it needs.
// Types come from use: arithmetic and currency filters mean a number, `date` a date, a for
// loop an array (of objects when the loop reads item properties), a dotted path nested
// objects. A value read only under an if/unless/case branch or through `default` is optional.
import { Output, TypeGuards, type Template } from 'liquidjs';
import { errors } from '../errors.js';
import type { JsonSchema } from './data-schema.js';
import { parseTemplate } from './liquid.js';

/**
 * Levels of objects and arrays the data may nest (the data object is level 1). The HTTP and MCP
 * edge refuses JSON over 64 levels and `data` sits one level inside the request body, so deeper
 * data could never be sent; refusing it here also keeps the recursive steps below shallow.
 */
export const MAX_DATA_DEPTH = 63;

export type { JsonSchema };

type Use = 'scalar' | 'string' | 'number' | 'date' | 'guard';

interface Node {
  depth: number;
  uses: Set<Use>;
  props: Map<string, Field> | null;
  items: Node | null;
}

interface Field {
  node: Node;
  required: boolean;
}

type Segment = string | number | null; // null: an index only known at render time

interface Binding {
  node: Node | null; // null: a local value (assign, capture), not data
  depth: number;
}

const NUMBER_FILTERS = new Set(['currency', 'plus', 'minus', 'times', 'divided_by', 'modulo', 'round', 'ceil', 'floor', 'abs', 'at_least', 'at_most']);
const ARRAY_FILTERS = new Set(['join', 'first', 'last', 'sort', 'sort_natural', 'map', 'where', 'where_exp', 'reject', 'uniq', 'reverse', 'compact', 'concat', 'sum', 'group_by', 'find', 'has']);
const STRING_FILTERS = new Set(['upcase', 'downcase', 'capitalize', 'strip', 'lstrip', 'rstrip', 'truncate', 'truncatewords', 'replace', 'replace_first', 'remove', 'append', 'prepend', 'split', 'escape', 'url_encode', 'newline_to_br', 'slice', 'asset']);

function newNode(parent: Node | null): Node {
  const depth = parent ? parent.depth + 1 : 1;
  // A node one level past the last container can only be a leaf value.
  if (depth > MAX_DATA_DEPTH + 1) {
    throw errors.liquid_syntax_error(`A placeholder reads data nested more than ${MAX_DATA_DEPTH} levels deep (objects and arrays); use a flatter path.`,
      { limit: MAX_DATA_DEPTH },
    );
  }
  return { depth, uses: new Set(), props: null, items: null };
}

function child(node: Node, key: string, required: boolean): Node {
  node.props ??= new Map();
  let field = node.props.get(key);
  if (!field) {
    field = { node: newNode(node), required };
    node.props.set(key, field);
  } else if (required) {
    field.required = true;
  }
  return field.node;
}

function items(node: Node): Node {
  node.items ??= newNode(node);
  return node.items;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- liquidjs's syntax tree is walked structurally */
class Walker {
  readonly root = newNode(null);
  private readonly scopes: Array<Map<string, Binding>> = [new Map()];
  private depth = 0;

  private lookup(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const found = this.scopes[i]!.get(name);
      if (found) return found;
    }
    return undefined;
  }

  private segments(token: any): { root: string; rest: Segment[] } | null {
    if (!TypeGuards.isPropertyAccessToken(token) || token.variable !== undefined) return null;
    const props = (token as any).props as any[];
    const first = props[0];
    if (!first || !(TypeGuards.isWordToken(first) || TypeGuards.isQuotedToken(first))) return null;
    const rest: Segment[] = [];
    for (const prop of props.slice(1)) {
      if (TypeGuards.isNumberToken(prop)) rest.push(Number(prop.content));
      else if (TypeGuards.isWordToken(prop) || TypeGuards.isQuotedToken(prop)) rest.push(String(prop.content));
      else {
        this.token(prop, 'scalar', false);
        rest.push(null);
      }
    }
    return { root: String(first.content), rest };
  }

  /** Records a use of a data path; returns the node reached (null for locals). */
  path(token: any, use: Use | null, optional: boolean): Node | null {
    const parsed = this.segments(token);
    if (!parsed) {
      this.token(token, 'scalar', optional);
      return null;
    }
    const binding = this.lookup(parsed.root);
    let node: Node;
    let required: boolean;
    if (binding) {
      if (!binding.node) return null;
      node = binding.node;
      required = !optional && this.depth <= binding.depth;
    } else {
      required = !optional && this.depth === 0;
      node = child(this.root, parsed.root, required);
    }
    for (const segment of parsed.rest) {
      if (segment === 'size') {
        if (!node.props) node.uses.add('guard');
        return null;
      }
      if (segment === 'first' || segment === 'last' || segment === null || typeof segment === 'number') {
        node = items(node);
        continue;
      }
      node = child(node, segment, required);
    }
    if (use) node.uses.add(use);
    return node;
  }

  /** Any value token: ranges, grouped expressions, paths. */
  token(token: any, use: Use | null, optional: boolean): void {
    if (!token) return;
    if (TypeGuards.isRangeToken(token)) {
      this.token(token.lhs, 'number', optional);
      this.token(token.rhs, 'number', optional);
    } else if (TypeGuards.isFilteredValueToken(token)) {
      this.filtered((token as any).initial.postfix, (token as any).filters, optional, false);
    } else if (TypeGuards.isPropertyAccessToken(token)) {
      this.path(token, use, optional);
    }
  }

  /** `initial | filters`: the first filter says what the initial value must be. */
  filtered(postfix: any[], filters: any[], optional: boolean, condition: boolean): void {
    const first = filters[0]?.name as string | undefined;
    const isDefault = filters.some((f) => f.name === 'default');
    let use: Use = condition ? 'guard' : 'scalar';
    if (first && NUMBER_FILTERS.has(first)) use = 'number';
    else if (first === 'date') use = 'date';
    else if (first && STRING_FILTERS.has(first)) use = 'string';
    const single = postfix.length === 1 && TypeGuards.isPropertyAccessToken(postfix[0]);
    if (single && first && ARRAY_FILTERS.has(first)) {
      const node = this.path(postfix[0], null, optional || isDefault);
      if (node) items(node).uses.add(first === 'sum' ? 'number' : 'scalar');
    } else if (single) {
      this.path(postfix[0], use, optional || isDefault || condition);
    } else {
      // An expression with operators: numbers when compared with a number literal.
      const numeric = condition && postfix.some((t) => TypeGuards.isNumberToken(t)) && postfix.some((t) => TypeGuards.isOperatorToken(t) && /^[<>]=?$/.test(t.operator));
      for (const token of postfix) {
        if (TypeGuards.isPropertyAccessToken(token)) this.path(token, numeric ? 'number' : condition ? 'guard' : 'scalar', optional || condition);
        else this.token(token, null, optional || condition);
      }
    }
    for (const filter of filters) {
      const argUse: Use = NUMBER_FILTERS.has(filter.name) && filter.name !== 'currency' ? 'number' : 'scalar';
      for (const arg of filter.args ?? []) {
        this.token(Array.isArray(arg) ? arg[1] : arg, argUse, optional || filter.name === 'default');
      }
    }
  }

  value(value: any, condition = false, optional = false): void {
    if (!value) return;
    this.filtered(value.initial.postfix, value.filters, optional, condition);
  }

  private guarded(templates: any[]): void {
    this.depth++;
    this.walk(templates);
    this.depth--;
  }

  private loop(tag: any): void {
    const node = this.path(tag.collection, null, false);
    if (!node && TypeGuards.isRangeToken(tag.collection)) this.token(tag.collection, 'number', false);
    for (const v of Object.values(tag.hash?.hash ?? tag.args?.hash ?? {})) this.token(v, 'number', false);
    const scope = new Map<string, Binding>([
      [tag.variable, { node: node ? items(node) : null, depth: this.depth }],
      ['forloop', { node: null, depth: this.depth }],
      ['tablerowloop', { node: null, depth: this.depth }],
    ]);
    this.scopes.push(scope);
    this.walk(tag.templates ?? []);
    this.scopes.pop();
    if (tag.elseTemplates?.length) this.guarded(tag.elseTemplates);
  }

  private local(name: string): void {
    this.scopes[0]!.set(name, { node: null, depth: 0 });
  }

  walk(templates: Template[]): void {
    for (const tpl of templates as any[]) {
      const name = tpl.token?.name as string | undefined;
      if (tpl instanceof Output) {
        this.value(tpl.value);
        continue;
      }
      switch (name) {
        case 'if':
        case 'unless':
          for (const branch of tpl.branches) this.value(branch.value, true);
          for (const branch of tpl.branches) this.guarded(branch.templates);
          if (tpl.elseTemplates) this.guarded(tpl.elseTemplates);
          break;
        case 'case':
          this.value(tpl.value);
          for (const branch of tpl.branches) {
            for (const v of branch.values) this.token(v, 'scalar', true);
            this.guarded(branch.templates);
          }
          if (tpl.elseTemplates) this.guarded(tpl.elseTemplates);
          break;
        case 'for':
        case 'tablerow':
          this.loop(tpl);
          break;
        case 'assign':
          this.value(tpl.value);
          this.local(tpl.key);
          break;
        case 'capture':
          this.walk(tpl.templates);
          this.local(tpl.variable);
          break;
        case 'increment':
        case 'decrement':
          this.local(tpl.variable);
          break;
        case 'echo':
          this.value(tpl.value);
          break;
        case 'liquid':
          this.walk(tpl.templates);
          break;
        default:
          break;
      }
    }
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */

function toSchema(node: Node): JsonSchema {
  if (node.props && node.props.size > 0) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [key, field] of node.props) {
      properties[key] = toSchema(field.node);
      if (field.required) required.push(key);
    }
    return { type: 'object', properties, required };
  }
  if (node.items) return { type: 'array', items: toSchema(node.items) };
  if (node.uses.has('number')) return { type: 'number' };
  if (node.uses.has('date')) return { type: 'string', format: 'date' };
  if (node.uses.has('string')) return { type: 'string' };
  if (node.uses.has('scalar')) return { type: ['string', 'number', 'boolean'] };
  return {};
}

function words(key: string): string {
  return key.replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
}

function sampleString(key: string, index: number): string {
  const k = key.toLowerCase();
  const n = index > 0 ? ` ${index}` : '';
  if (k.includes('email')) return 'jane.doe@example.com';
  if (k.includes('currency')) return 'USD';
  if (/phone|tel/.test(k)) return '+1 555 0100';
  if (/url|website|link/.test(k)) return 'https://example.com';
  if (/(number|_no|^no$|_id$|^id$|reference|ref$)/.test(k)) return `INV-2026-00${index + 1}`;
  if (/company|organi[sz]ation|business|vendor|seller|issuer/.test(k)) return 'Acme Corporation';
  if (/city/.test(k)) return 'Springfield';
  if (/country/.test(k)) return 'United States';
  if (/zip|postal/.test(k)) return '12345';
  if (/street|address/.test(k)) return '742 Evergreen Terrace';
  if (/logo|image|asset|signature/.test(k)) return 'logo.png';
  if (/name/.test(k)) return index > 0 ? `Item${n}` : 'Jane Doe';
  if (/title/.test(k)) return `Sample title${n}`;
  if (/description|item|product|service/.test(k)) return `Consulting services${n}`;
  if (/notes?|message|body|text|comment|terms/.test(k)) return 'Thank you for your business.';
  return `Sample ${words(key)}${n}`;
}

function sampleNumber(key: string): number {
  const k = key.toLowerCase();
  if (/qty|quantity|count|hours|units|days/.test(k)) return 2;
  if (/rate|percent|pct|discount/.test(k)) return 10;
  if (/year/.test(k)) return 2026;
  if (/price|amount|total|cost|fee|subtotal|tax|balance|due|paid|salary|sum/.test(k)) return 125.5;
  return 3;
}

// Two items show a list; arrays nested deeper than two get one each, or the sample would double
// with every level (`{{ x[0][0]...[0] }}` thirty deep is a billion values).
function sample(schema: JsonSchema, key: string, index: number, arrays = 0): unknown {
  if (schema.type === 'object') {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, sample(s, k, index, arrays)]));
  }
  if (schema.type === 'array') {
    const item = schema.items ?? {};
    return (arrays < 2 ? [1, 2] : [1]).map((i) => sample(item, key, i, arrays + 1));
  }
  if (schema.type === 'number') return sampleNumber(key);
  if (schema.format === 'date') return `2026-01-${String(14 + index).padStart(2, '0')}`;
  if (schema.type === undefined) return true;
  if (Array.isArray(schema.type) && /qty|quantity|count|hours|units|days/i.test(key)) return sampleNumber(key);
  return sampleString(key, index);
}

/** The JSON Schema of the data `source` reads, and sample data that validates against it. */
export function deriveSchema(source: string): { schema: JsonSchema; sample_data: Record<string, unknown> } {
  const { templates } = parseTemplate(source);
  const walker = new Walker();
  walker.walk(templates);
  const body = toSchema(walker.root);
  const schema: JsonSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: body.properties ?? {},
    required: body.required ?? [],
  };
  return { schema, sample_data: sample(schema, '', 0) as Record<string, unknown> };
}
