// The async door of compile, V2 render and public render: `"async": true` (and an optional
// `callback_url`) turns the synchronous call into a job answered 202 {job_id, status, status_url}.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Caller } from '../accounts/caller.js';
import { invalidField } from '../errors.js';
import { AcceptedBody } from '../jobs/schemas.js';
import type { AsyncWork } from '../jobs/service.js';
import type { JobKind } from '../jobs/store.js';
import type { Services } from '../services.js';

export { AcceptedBody };

/** The 202 answer: AcceptedBody, with the job's status URL in Location too. */
export const AcceptedResponse = { ...AcceptedBody, headers: { Location: Type.String({ format: 'uri', description: 'The status_url' }) } };

export interface AsyncRequest {
  async: boolean;
  callbackUrl: unknown;
}

/** The body minus the fields the async door reads: what the service call receives. */
export type SyncFields<Body> = Omit<Body, 'async' | 'callback_url'>;

/** Reads and strips `async` and `callback_url` from a request body (an object: its route schema says so). */
export function asyncOf<Body extends { async?: unknown; callback_url?: unknown }>(body: Body): AsyncRequest & { rest: SyncFields<Body> } {
  const { async, callback_url, ...rest } = body;
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
