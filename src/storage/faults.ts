// The one place where driver errors become catalogue errors. A lost PostgreSQL, Redis or
// object store is the server's trouble, not the client's: 503 with `retryable: true` and a
// Retry-After, so callers back off and retry while the node reconnects by itself. A full disk
// is 507 `storage_full`, also retryable (space is freed by the janitor or the operator).
import { errors, fail, ServiceError } from '../errors.js';

export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 60;

type Dependency = 'database' | 'redis' | 'blob_store';

const CODES = {
  database: 'database_unavailable',
  redis: 'redis_unavailable',
  blob_store: 'storage_unavailable',
} as const satisfies Record<Dependency, string>;

const NAMES: Record<Dependency, string> = { database: 'The database', redis: 'Redis', blob_store: 'The blob store' };

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
const FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

interface DriverError {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  errors?: unknown;
  $metadata?: { httpStatusCode?: number };
}

function codeOf(err: unknown): string {
  return typeof (err as DriverError)?.code === 'string' ? ((err as DriverError).code as string) : '';
}

function messageOf(err: unknown): string {
  return typeof (err as DriverError)?.message === 'string' ? ((err as DriverError).message as string) : '';
}

/** A socket-level failure (Node also wraps a refused dual-stack connect in an AggregateError). */
function isNetworkError(err: unknown): boolean {
  if (NETWORK.has(codeOf(err))) return true;
  const inner = (err as DriverError)?.errors;
  return Array.isArray(inner) && inner.some((e) => NETWORK.has(codeOf(e)));
}

export function unavailable(dependency: Dependency, cause?: unknown): ServiceError {
  const error = fail(CODES[dependency], `${NAMES[dependency]} is unreachable right now; retry in a few seconds.`, {
    retryable: true,
    retry_after_seconds: DEPENDENCY_RETRY_AFTER_SECONDS,
  });
  if (cause !== undefined) error.cause = cause;
  return error;
}

export function storageFull(cause?: unknown): ServiceError {
  const error = errors.storage_full(
    'The server has no room to store this right now; retry later.',
    { retryable: true, retry_after_seconds: STORAGE_FULL_RETRY_AFTER_SECONDS },
  );
  if (cause !== undefined) error.cause = cause;
  return error;
}

/**
 * PostgreSQL: the server going away (57P01 admin shutdown, 57P02 crash, 57P03 cannot connect
 * now), any connection exception (class 08), too many connections (53300), a socket error,
 * or the pool's own "terminated" and "timeout" messages. Null for everything else (a
 * constraint violation stays what it is).
 */
export function databaseFault(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return null;
  const code = codeOf(err);
  if (/^57P0[123]$/.test(code) || code.startsWith('08') || code === '53300' || isNetworkError(err)) return unavailable('database', err);
  if (FULL.has(code) || code === '53100') return storageFull(err);
  const message = messageOf(err);
  if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(message)) {
    return unavailable('database', err);
  }
  return null;
}

/** ioredis: a refused or dropped socket, retries exhausted, or a closed connection. */
export function redisFault(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return null;
  const name = typeof (err as DriverError)?.name === 'string' ? ((err as DriverError).name as string) : '';
  if (name === 'MaxRetriesPerRequestError' || isNetworkError(err)) return unavailable('redis', err);
  if (/Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out|LOADING|READONLY/.test(messageOf(err))) {
    return unavailable('redis', err);
  }
  return null;
}

/** Local disk or object store: full, or unreachable. */
export function storageFault(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return null;
  if (FULL.has(codeOf(err)) || ['QuotaExceeded', 'InsufficientStorage'].includes(String((err as DriverError)?.name))) {
    return storageFull(err);
  }
  const status = (err as DriverError)?.$metadata?.httpStatusCode;
  const name = String((err as DriverError)?.name ?? '');
  if (isNetworkError(err) || name === 'TimeoutError' || name === 'RequestTimeout' || (status !== undefined && status >= 500)) {
    return unavailable('blob_store', err);
  }
  return null;
}

/**
 * The last resort of the adapters for an error no service mapped: a full disk anywhere (a TeX
 * workspace, the SQLite file) is still storage_full, not an internal error.
 */
export function diskFault(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return null;
  return FULL.has(codeOf(err)) ? storageFull(err) : null;
}
