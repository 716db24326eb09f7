// The request fields that turn compile, V2 render and public render into an async job
// (an extension of SPEC 1.5.0; docs/async-and-webhooks.md). Declared once and spread into
// each request schema, so OpenAPI and the MCP tools describe them; described loosely, because
// the async door (http/async.ts) checks them and answers with its own codes.
import { Type } from '@sinclair/typebox';
import { checkedByService } from '../documented.js';

export const AsyncRequestFields = {
  async: Type.Optional(
    checkedByService(
      Type.Boolean({ description: 'Extension: true answers 202 {job_id, status, status_url} at once and runs the work as a job (API key required)' }),
    ),
  ),
  callback_url: Type.Optional(
    checkedByService(
      Type.String({
        format: 'uri',
        description: 'Extension, with async: an https URL that receives a signed webhook (Standard Webhooks) when the job ends',
      }),
    ),
  ),
};
