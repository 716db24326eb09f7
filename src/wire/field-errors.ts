// Ajv's validation errors as the catalogue's field list (`{field, rule, limit?, message}`), so a
// route's body and an MCP tool's arguments name a bad field the same way.
import type { FieldError } from '../errors.js';

/** The part of an Ajv error this module reads (Fastify passes Ajv's errors through as they are). */
export interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldName(error: AjvError, context?: string): string {
  const path = (error.instancePath ?? '').split('/').filter(Boolean).join('.');
  const extra = (error.params?.missingProperty ?? error.params?.additionalProperty) as string | undefined;
  const name = [path, extra].filter(Boolean).join('.');
  return name || (context === 'body' ? 'body' : (context ?? 'body'));
}

/** One field error per Ajv error; `context` (body, querystring, params) names a problem with no path. */
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
