// Wire shapes of async jobs (an accepted request, a job read back), shared by the HTTP routes
// and the MCP tools; docs/async-and-webhooks.md.
import { Type } from '@sinclair/typebox';

export const AcceptedBody = Type.Object(
  {
    job_id: Type.String({ format: 'uuid' }),
    status: Type.String({ enum: ['queued', 'running'] }),
    status_url: Type.String({ format: 'uri' }),
  },
  { description: 'Accepted: the job runs in the background (async: true)' },
);

export const JobBody = Type.Object(
  {
    job_id: Type.String({ format: 'uuid' }),
    kind: Type.String({ enum: ['compile', 'render', 'public_render', 'render_batch'] }),
    status: Type.String({ enum: ['queued', 'running', 'succeeded', 'failed'] }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    http_status: Type.Optional(Type.Integer({ description: 'Status the synchronous call would have answered' })),
    result: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The synchronous success body' })),
    error: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The synchronous error body' })),
    webhook: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'callback_url, state, next_attempt_at, attempts' })),
  },
  { additionalProperties: true },
);
