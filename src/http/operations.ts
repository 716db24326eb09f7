// What the OpenAPI document says of each operation, derived from the route's own declaration
// so it cannot drift: its security (from `config.auth`), and one error response per status
// built from the catalogue codes it can send: the route's own (`config.errors`, the codes its
// service throws) plus those every door adds (auth, JSON body, Idempotency-Key, faults).
import { Type, type TSchema } from '@sinclair/typebox';
import { CATALOGUE, mayRetryAfter, RETRY_AFTER, type ErrorCode } from '../errors.js';
import type { AuthMode } from './auth.js';
import { takesIdempotencyKey } from './idempotency.js';
import type { App } from './types.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalogue codes the route's service can throw (the door's own are added: see operations.ts). */
    errors?: readonly ErrorCode[];
    /** The route reads its body itself (no JSON parser: no invalid_json, no 415). */
    ownBodyParser?: boolean;
  }
}

const SECURITY: Record<AuthMode, Array<Record<string, string[]>>> = {
  required: [{ bearer: [] }, { apiKey: [] }],
  paid: [{ bearer: [] }, { apiKey: [] }],
  // `{}` first: the route also works with no credentials.
  optional: [{}, { bearer: [] }, { apiKey: [] }],
};

/**
 * Any operation: a fault of ours, an over-long URL or a path with a malformed escape, and what
 * the connection handler (hardening.ts) answers to a request too slow or with too large headers.
 */
const EVERY: ErrorCode[] = ['internal_error', 'uri_too_long', 'bad_request', 'request_timeout', 'headers_too_large'];
/** An operation whose parameters or body have a schema. */
const VALIDATED: ErrorCode[] = ['validation_failed'];
/** An operation reading a body (bodyLimit), and one parsing it as JSON (the app's parser and edge.ts). */
const BODY: ErrorCode[] = ['payload_too_large'];
const JSON_BODY: ErrorCode[] = ['invalid_json', 'json_too_deep', 'unsupported_media_type'];
/** The key check of auth.ts (it reads the database). */
const AUTH: Record<AuthMode, ErrorCode[]> = {
  optional: ['invalid_api_key', 'database_unavailable'],
  required: ['missing_api_key', 'invalid_api_key', 'database_unavailable'],
  paid: ['missing_api_key', 'invalid_api_key', 'plan_required', 'database_unavailable'],
};
const IDEMPOTENCY: ErrorCode[] = ['invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_key_in_progress'];

const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'Runs an account\'s POST once: the same key and request within 24 h replays the stored answer (docs/async-and-webhooks.md)' }),
  ),
});

const RetryAfter = Type.String({ pattern: '^[0-9]+$', description: 'Seconds to wait before retrying (sent when the body says retry_after_seconds)' });

/** Response headers an error code implies (the throw sites add them: see ServiceError.headers). */
const HEADERS_OF: Partial<Record<ErrorCode, Record<string, TSchema>>> = {
  method_not_allowed: { Allow: Type.String({ description: 'The methods this path answers' }) },
  range_not_satisfiable: { 'Content-Range': Type.String({ pattern: '^bytes \\*/[0-9]+$', description: 'bytes */<size of the PDF>' }) },
};

/** The body of the errors of one status: `error` is one of `codes`; the code's own fields follow. */
function errorStatusBody(codes: ErrorCode[], base?: TSchema): TSchema {
  const error = Type.Unsafe<ErrorCode>({ type: 'string', enum: codes, description: 'Machine-readable error code (docs/errors.md)' });
  const { properties: own = {}, headers: ownHeaders = {} } = (base ?? {}) as { properties?: Record<string, TSchema>; headers?: Record<string, TSchema> };
  const headers: Record<string, TSchema> = Object.assign({}, ...codes.map((code) => HEADERS_OF[code] ?? {}), ownHeaders);
  if (codes.some(mayRetryAfter)) headers[RETRY_AFTER] = RetryAfter;
  return Type.Object(
    { ...own, error, message: Type.String() },
    {
      additionalProperties: true,
      description: `${codes.join(', ')}: \`error\`, \`message\` and the fields the code names`,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    },
  );
}

/**
 * Response map entries for the catalogue codes an operation can send, one per status. A status
 * the route already describes (a compile's 422 CompileFailure) keeps its fields and gets the
 * code list as its `error`.
 */
export function errorResponses(codes: Iterable<ErrorCode>, declared: Record<string, TSchema> = {}): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [status, errorStatusBody(list.sort(), declared[status])]),
  );
}

export function installOperationDocs(app: App): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as (Record<string, unknown> & { hide?: boolean; response?: Record<string, TSchema> }) | undefined;
    if (!schema || schema.hide) return; // not in the document
    const config = route.config ?? {};
    const mode = config.auth;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const idempotent = mode !== undefined && methods.some((method) => takesIdempotencyKey(method, route.url));
    const jsonBody = schema.body !== undefined && !config.ownBodyParser;
    const codes: ErrorCode[] = [
      ...EVERY,
      ...(jsonBody || schema.params || schema.querystring ? VALIDATED : []),
      ...(schema.body ? BODY : []),
      ...(jsonBody ? JSON_BODY : []),
      ...(mode ? AUTH[mode] : []),
      ...(idempotent ? IDEMPOTENCY : []),
      ...(config.errors ?? []),
    ];
    const declared = schema.response ?? {};
    route.schema = {
      ...schema,
      ...(idempotent && !schema.headers ? { headers: IdempotencyHeader } : {}),
      security: (schema.security as Array<Record<string, string[]>> | undefined) ?? (mode ? SECURITY[mode] : []),
      response: { ...declared, ...errorResponses(codes, declared) },
    };
  });
}
