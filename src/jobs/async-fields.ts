// The request fields that turn compile, V2 render and public render into an async job
// (an extension of SPEC 1.5.0; docs/async-and-webhooks.md). Declared once and spread into
// each request schema, so OpenAPI and the MCP tools describe them; described loosely, because
// asyncRequest() below checks them, for every door, with its own codes.
import { Type } from '@sinclair/typebox';
import { checkedByService } from '../documented.js';
import { invalidField } from '../errors.js';

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

/** Whether a call is to be answered now or accepted as an async job, and where its webhook goes. */
export interface AsyncRequest {
  async: boolean;
  callbackUrl: unknown;
}

/**
 * Reads `async` and `callback_url` (an HTTP body or MCP arguments); `lead` is the door's
 * wording of a validation error. The URL itself is checked when the job starts.
 */
export function asyncRequest(fields: { async?: unknown; callback_url?: unknown }, lead?: string): AsyncRequest {
  const { async, callback_url } = fields;
  const wording = lead === undefined ? {} : { lead };
  if (async !== undefined && typeof async !== 'boolean') {
    throw invalidField('async', 'type', 'must be boolean', wording);
  }
  if (callback_url !== undefined && async !== true) {
    throw invalidField('callback_url', 'dependencies', 'needs async: true', wording);
  }
  return { async: async === true, callbackUrl: callback_url };
}
