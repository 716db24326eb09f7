// Wire schemas shared by several routes (and by MCP tool definitions).
import { Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code' }),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Error body: `error` code, `message`, and fields the code names' },
);

export const IdParam = Type.Object({
  id: Type.String({ description: 'Numeric id or (URL-encoded) name' }),
});
