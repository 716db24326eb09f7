// Every error leaves as JSON `{error, message, ...}` with the catalogue's status.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_ERROR_BODY, ServiceError } from '../errors.js';
import { diskFault } from '../storage/faults.js';

interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

export interface FieldError {
  field: string;
  rule: string;
  limit?: number;
  message: string;
}

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

function toServiceError(err: FastifyError): ServiceError | null {
  if (err instanceof ServiceError) return err;
  if (err.validation) {
    const fields = fieldErrors(err.validation as AjvError[], err.validationContext);
    const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
    return new ServiceError('validation_failed', `Request is invalid: ${summary}`, { fields });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ServiceError('invalid_json', `Request body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError('payload_too_large', 'Request body is larger than this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ServiceError('unsupported_media_type', 'Send the request body as application/json.');
  }
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return new ServiceError('invalid_json', `Request body is not valid JSON: ${err.message}`);
  }
  return diskFault(err);
}

export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const known = toServiceError(err);
  if (known) {
    if (known.status >= 500) req.log.error({ err, code: known.code }, known.message);
    void reply.code(known.status).headers(known.headers).send(known.body());
    return;
  }
  req.log.error({ err }, 'unhandled error');
  void reply.code(500).send(INTERNAL_ERROR_BODY);
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).send({ error: 'not_found', message: `No route for ${req.method} ${req.url.split('?')[0]}` });
}
