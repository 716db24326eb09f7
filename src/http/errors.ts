// Every error leaves as JSON `{error, message, ...}` with the catalogue's status.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errors, fail, INTERNAL_ERROR_BODY, ServiceError, type FactoryCode, validationFailed } from '../errors.js';
import { diskFault } from '../storage/faults.js';
import { type AjvError, fieldErrors } from '../wire/field-errors.js';

function toServiceError(err: FastifyError): ServiceError | null {
  if (err instanceof ServiceError) return err;
  if (err.validation) {
    const fields = fieldErrors(err.validation as AjvError[], err.validationContext);
    return validationFailed(fields);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalid_json(`Request body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payload_too_large('Request body is larger than this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupported_media_type('Send the request body as application/json.');
    case 'FST_ERR_BAD_URL':
      return errors.bad_request('The URL path cannot be decoded: it holds a malformed percent-escape (such as "%zz") or an invalid encoded character.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return errors.uri_too_long('A segment of the URL path is longer than this server accepts.');
  }
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return errors.invalid_json(`Request body is not valid JSON: ${err.message}`);
  }
  const status = err.statusCode ?? (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) return byStatus(status, err.message);
  return diskFault(err);
}

/** Codes for the 4xx errors the framework and its plugins raise themselves (e.g. a bad Content-Length). */
const CODE_OF_STATUS: Partial<Record<number, FactoryCode>> = {
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  431: 'headers_too_large',
};

function byStatus(status: number, message: string): ServiceError {
  // Any other client error (such as a static file plugin's 403 for a path it will not serve) is a 400.
  return fail(CODE_OF_STATUS[status] ?? 'bad_request', `The request was refused: ${message}`, {});
}

export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const known = toServiceError(err);
  if (known) {
    if (known.status >= 500) req.log.error({ err, code: known.code }, known.message);
    else if (!(err instanceof ServiceError) && !err.validation) req.log.debug({ err, code: known.code }, 'request refused by the framework');
    void reply.code(known.status).headers(known.headers).send(known.body());
    return;
  }
  req.log.error({ err }, 'unhandled error');
  void reply.code(500).send(INTERNAL_ERROR_BODY);
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).send({ error: 'not_found', message: `No route for ${req.method} ${req.url.split('?')[0]}` });
}
