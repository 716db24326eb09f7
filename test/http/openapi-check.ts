// Checks a real HTTP response against the OpenAPI document the server serves: the status is
// declared, the content type is declared for it, each declared header holds its schema (and
// required ones are there), and a JSON body validates against the document's own schema with
// ajv (closed where the document says additionalProperties: false, codes limited to the
// declared enum). Used by the contract test and the SDK test.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
}

export interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema: object }>; headers?: Record<string, { schema: object; required?: boolean }> }>;
}

export interface OperationRef {
  method: string;
  path: string;
  operation: Operation;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/** Every operation of the document by operationId. */
export function operationsOf(doc: OpenApiDoc): Map<string, OperationRef> {
  const found = new Map<string, OperationRef>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      if (found.has(operation.operationId)) throw new Error(`operationId ${operation.operationId} is used twice`);
      found.set(operation.operationId, { method: method.toUpperCase(), path, operation });
    }
  }
  return found;
}

/** Magic bytes of the binary types the document declares. */
const MAGIC: Record<string, Buffer> = {
  'application/pdf': Buffer.from('%PDF-'),
  'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
};

/**
 * The schema with every object that lists its properties and says nothing of others closed: a
 * field the document does not name is a violation. An object open on purpose says
 * `additionalProperties: true` (error bodies: the code's own fields).
 */
function closed(schema: unknown, partOfAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => closed(item, partOfAllOf));
  if (!schema || typeof schema !== 'object') return schema;
  // The members of an allOf each name part of the fields, so only the whole could be closed.
  const node = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value, key === 'allOf')]));
  if (node.properties && !partOfAllOf && !('additionalProperties' in node)) node.additionalProperties = false;
  return node;
}

export class ResponseChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  private validate(schema: object, value: unknown): string | null {
    let validator = this.compiled.get(schema);
    if (!validator) {
      validator = this.ajv.compile(closed(structuredClone(schema)) as object);
      this.compiled.set(schema, validator);
    }
    return validator(value) ? null : this.ajv.errorsText(validator.errors, { dataVar: 'body' });
  }

  /** The violations of one response to `ref` (empty when it is what the document says). */
  check(ref: OperationRef, status: number, headers: Headers, body: Buffer): string[] {
    const where = `${ref.operation.operationId} ${status}`;
    const response = ref.operation.responses[String(status)] ?? ref.operation.responses[`${String(status)[0]}XX`] ?? ref.operation.responses.default;
    if (!response) return [`${where}: status not declared (declared: ${Object.keys(ref.operation.responses).join(', ')})`];
    const violations: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = headers.get(name);
      if (value === null) {
        if (header.required) violations.push(`${where}: required header ${name} missing`);
        continue;
      }
      const problem = this.validate(header.schema, value);
      if (problem) violations.push(`${where}: header ${name}: ${problem}`);
    }
    const type = headers.get('content-type')?.split(';')[0]?.trim() ?? null;
    const declared = response.content ?? {};
    if (Object.keys(declared).length === 0) {
      if (body.length > 0 || type !== null) violations.push(`${where}: declares no body, got ${type ?? 'no type'} with ${body.length} bytes`);
      return violations;
    }
    if (type === null || !declared[type]) {
      violations.push(`${where}: content type ${type} not declared (declared: ${Object.keys(declared).join(', ')})`);
      return violations;
    }
    if (type === 'application/json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return [...violations, `${where}: body is not JSON`];
      }
      const problem = this.validate(declared[type].schema, parsed);
      if (problem) violations.push(`${where}: ${problem} in ${body.toString('utf8').slice(0, 300)}`);
    } else if (MAGIC[type] && !body.subarray(0, MAGIC[type].length).equals(MAGIC[type])) {
      violations.push(`${where}: body is not ${type}`);
    }
    return violations;
  }
}
