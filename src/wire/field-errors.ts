// Ajv's validation errors as the catalogue's field errors (`validation_failed`'s `fields`):
// the same wording whichever door validated the value, an HTTP route or an MCP tool's arguments.
import type { FieldError } from '../errors.js';

export interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

export type { FieldError };

function fieldName(error: AjvError, context?: string): string {
  const path = (error.instancePath ?? '').split('/').filter(Boolean).join('.');
  const extra = (error.params?.missingProperty ?? error.params?.additionalProperty) as string | undefined;
  const name = [path, extra].filter(Boolean).join('.');
  return name || (context === 'body' ? 'body' : (context ?? 'body'));
}

export function fieldErrors(errors: AjvError[], context?: string): FieldError[] {
  return errors.map((error) => {
    const limit = error.params?.limit;
    return {
      field: fieldName(error, context),
      rule: error.keyword === 'additionalProperties' ? 'unknown_field' : error.keyword,
      ...(typeof limit === 'number' ? { limit } : {}),
      message: error.message ?? 'is invalid',
    };
  });
}
