// The async door of compile, V2 render and public render over HTTP: `"async": true` (and an
// optional `callback_url`) turns the synchronous call into a job answered 202 {job_id, status,
// status_url}. The fields are read, and the branch taken, by the job service (jobs/).
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Caller } from '../accounts/caller.js';
import { asyncRequest, type AsyncRequest } from '../jobs/async-fields.js';
import { AcceptedBody } from '../jobs/schemas.js';
import type { AsyncHooks } from '../jobs/service.js';
import type { JobKind } from '../jobs/store.js';
import type { Services } from '../services.js';

export { AcceptedBody };

/** The 202 answer: AcceptedBody, with the job's status URL in Location too. */
export const AcceptedResponse = { ...AcceptedBody, headers: { Location: Type.String({ format: 'uri', description: 'The status_url' }) } };

/** The body minus the fields the async door reads: what the service call receives. */
export type SyncFields<Body> = Omit<Body, 'async' | 'callback_url'>;

/** Reads and strips `async` and `callback_url` from a request body (an object: its route schema says so). */
export function asyncOf<Body extends { async?: unknown; callback_url?: unknown }>(body: Body): { request: AsyncRequest; rest: SyncFields<Body> } {
  const { async: _async, callback_url: _callbackUrl, ...rest } = body;
  return { request: asyncRequest(body), rest };
}

/** Sends the synchronous body, or 202 with the job the call was accepted as. */
export async function answer<T>(
  services: Services,
  reply: FastifyReply,
  caller: Caller,
  kind: JobKind,
  request: AsyncRequest,
  work: (hooks: AsyncHooks) => Promise<T>,
): Promise<T | FastifyReply> {
  const outcome = await services.asyncJobs.answer(caller, kind, request, work);
  if (!outcome.accepted) return outcome.body;
  return reply.code(202).header('location', outcome.job.status_url).send(outcome.job);
}
