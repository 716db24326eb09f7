// Wire shape of an accepted async request, shared by the HTTP routes and MCP tools.
import { Type } from '@sinclair/typebox';

export const AcceptedBody = Type.Object(
  {
    job_id: Type.String({ format: 'uuid' }),
    status: Type.String({ enum: ['queued', 'running'] }),
    status_url: Type.String({ format: 'uri' }),
  },
  { description: 'Accepted: the job runs in the background (async: true)' },
);
