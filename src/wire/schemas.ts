// Wire schemas shared by several routes (and by MCP tool definitions).
import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code' }),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Error body: `error` code, `message`, and fields the code names' },
);

/** Response map entries for the error statuses a route can send. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}

export const IdParam = Type.Object({
  id: Type.String({ description: 'Numeric id or (URL-encoded) name' }),
});
