// The async door of compile, V2 render and public render: `"async": true` (and an optional
// `callback_url`) turns the synchronous call into a job answered 202 {job_id, status, status_url}.
import type { FastifyReply } from 'fastify';
import type { Caller } from '../accounts/caller.js';
import { invalidField } from '../errors.js';
import { AcceptedBody } from '../jobs/schemas.js';
import type { AsyncWork } from '../jobs/service.js';
import type { JobKind } from '../jobs/store.js';
import type { Services } from '../services.js';

export { AcceptedBody };

export interface AsyncRequest {
  async: boolean;
  callbackUrl: unknown;
}

/** Reads and strips `async` and `callback_url` from a request body. */
export function asyncOf(body: unknown): AsyncRequest & { rest: Record<string, unknown> } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { async: false, callbackUrl: undefined, rest: body as Record<string, unknown> };
  const { async, callback_url, ...rest } = body as Record<string, unknown>;
  if (async !== undefined && typeof async !== 'boolean') {
    throw invalidField('async', 'type', 'must be boolean');
  }
  if (callback_url !== undefined && async !== true) {
    throw invalidField('callback_url', 'dependencies', 'needs async: true');
  }
  return { async: async === true, callbackUrl: callback_url, rest };
}

/** Starts the job and answers 202. */
export async function acceptAsync(services: Services, reply: FastifyReply, caller: Caller, kind: JobKind, callbackUrl: unknown, work: AsyncWork) {
  const accepted = await services.asyncJobs.start(caller, { kind, callbackUrl }, work);
  return reply.code(202).header('location', accepted.status_url).send(accepted);
}
