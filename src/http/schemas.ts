// Wire schemas shared by several routes (and by MCP tool definitions), and the error responses
// of an operation built from the catalogue codes it can send (so the document cannot drift).
import { Type, type TSchema } from '@sinclair/typebox';
import { CATALOGUE, mayRetryAfter, RETRY_AFTER, type ErrorCode } from '../errors.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code' }),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Error body: `error` code, `message`, and fields the code names' },
);

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

export const IdParam = Type.Object({
  id: Type.String({ description: 'Numeric id or (URL-encoded) name' }),
});
