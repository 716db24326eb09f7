// The edge of the HTTP door (docs/http-hardening.md): what is refused before routing, body
// parsing, validation or any handler runs, and the framework's and Node's own refusals (bad
// percent-escapes, over-long URLs, malformed HTTP) put into the catalogue's `{error, message}`.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type ServiceError } from '../errors.js';
import { assertSafeJson, type AssetNameAt } from '../wire/json-safety.js';
import { errorHandler } from './errors.js';
import type { App } from './types.js';

/** Longest request target (path and query) served; Node itself stops at 16 KB for the whole head. */
export const MAX_URL_LENGTH = 8192;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Where the route's body or path names asset files: a NUL there is invalid_asset_filename. */
    assetNames?: AssetNameAt;
  }
}

// swagger-ui's files are plain names; an encoded slash or backslash, a dot segment or a NUL
// never reaches the static file server, which would otherwise answer its own 403 or 400.
const STATIC_PREFIX = '/docs/static/';
const STATIC_FILE = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function installHardening(app: App): void {
  app.addHook('onRequest', async (req) => {
    if (req.url.length > MAX_URL_LENGTH) {
      throw errors.uri_too_long(`The URL is ${req.url.length} characters long; this server accepts at most ${MAX_URL_LENGTH}.`, {
        limit: MAX_URL_LENGTH,
      });
    }
    const path = req.url.split('?')[0] as string;
    if (path.startsWith(STATIC_PREFIX)) {
      const file = path.slice(STATIC_PREFIX.length);
      if (file !== '' && !STATIC_FILE.test(file)) throw errors.not_found('No such documentation file.');
    }
  });

  // After parsing, before Ajv: nothing recursive has touched the body yet.
  app.addHook('preValidation', async (req) => {
    const assetNameAt = req.routeOptions.config.assetNames;
    // A wildcard path names a file to serve (/build/*): with a NUL it names none.
    const wildcard = (req.params as Record<string, unknown> | undefined)?.['*'];
    if (typeof wildcard === 'string' && wildcard.includes('\0')) throw errors.not_found('No such file.');
    assertSafeJson(req.params, { what: 'The URL path', assetNameAt });
    assertSafeJson(req.query, { what: 'The query string', assetNameAt });
    const body: unknown = req.body;
    // Bodies that reach a handler as text (the MCP door) are parsed and checked there.
    if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) {
      assertSafeJson(body, { what: 'The request body', assetNameAt });
    }
  });
}

/** Fastify's `frameworkErrors`: a URL the router cannot decode, or an over-long path segment. */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  void reply.header('x-request-id', req.id);
  errorHandler(err, req, reply);
}

// Node counts the request line and the headers against one 16 KB limit: the request line alone
// not fitting (or being longer than we serve) means the URL is at fault, not the headers.
function requestLineOverflowed(packet: unknown): boolean {
  if (!Buffer.isBuffer(packet)) return false;
  const head = packet.subarray(0, MAX_URL_LENGTH + 32).toString('latin1');
  if (!/^[A-Z]+ /.test(head)) return false;
  const end = head.indexOf('\r\n');
  return end === -1 || end > MAX_URL_LENGTH;
}

function clientError(err: ConnectionError): ServiceError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return requestLineOverflowed((err as { rawPacket?: unknown }).rawPacket)
        ? errors.uri_too_long(`The URL is longer than this server accepts (at most ${MAX_URL_LENGTH} characters).`, {
            limit: MAX_URL_LENGTH,
          })
        : errors.headers_too_large('The request headers are larger than this server accepts (16 KB with the request line).');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errors.request_timeout('The request was not received in time.');
    default:
      return errors.bad_request('The request is not valid HTTP/1.1 (a malformed request line or header).');
  }
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request before Fastify saw it,
 * so the answer is written to the socket by hand, in the catalogue shape, and the socket closed.
 */
export function clientErrorHandler(err: ConnectionError, socket: Socket): void {
  // Node's parser may report again on the bytes that follow: the first answer stands.
  if (err.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  const error = clientError(err);
  const body = JSON.stringify(error.body());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  // Destroying at once would reset a connection whose client is still sending (a 100 KB URL)
  // and could lose the answer; give it a moment to read it, then close for good.
  setTimeout(() => socket.destroy(), 1000).unref();
}
