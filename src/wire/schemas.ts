// Wire schemas shared by several routes (and by MCP tool definitions).
import { Type } from '@sinclair/typebox';
import { DiagnosisBody } from '../tex/diagnosis/diagnosis.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code' }),
    message: Type.Optional(Type.String()),
    diagnosis: Type.Optional(DiagnosisBody),
  },
  { additionalProperties: true, description: 'Error body: `error` code, `message`, and fields the code names' },
);

export const IdParam = Type.Object({
  id: Type.String({ description: 'Numeric id or (URL-encoded) name' }),
});
