// Async and idempotency for the MCP doors of compile, render and render_public_template
// (arguments `async`, `callback_url`, `idempotency_key`), and the get_job tool. The same
// JobService and IdempotencyStore as over HTTP; docs/async-and-webhooks.md.
import { Type } from '@sinclair/typebox';
import { errors, restore, isServiceError, type ErrorCode } from '../../errors.js';
import { fingerprint } from '../../idempotency/store.js';
import { asyncRequest } from '../../jobs/async-fields.js';
import { AcceptedBody, JobBody } from '../../jobs/schemas.js';
import type { Accepted } from '../../jobs/service.js';
import { guard } from '../checks.js';
import { callerOf, defineTool, type Body, type Tool, type ToolReply } from '../tool.js';

const isAccepted = guard<Accepted>(AcceptedBody).is;

function isBody(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function acceptedReply(accepted: Accepted): ToolReply {
  return {
    body: { ...accepted },
    text: `Accepted as job ${accepted.job_id} (${accepted.status}). Call get_job with this job_id until status is succeeded or failed.`,
    attachments: [],
  };
}

const EXTRA_ARGUMENTS = {
  async: Type.Optional(
    Type.Boolean({ description: 'true: answer at once with {job_id, status, status_url}; read the outcome with get_job (or receive it at callback_url). Needs an API key.' }),
  ),
  callback_url: Type.Optional(Type.String({ description: 'With async: an https URL that receives a signed webhook when the job ends.' })),
  idempotency_key: Type.Optional(
    Type.String({ maxLength: 255, description: 'Any unique string (1-255 chars): a repeated call with the same key and arguments within 24 h returns the first result and is not charged again.' }),
  ),
};

/** `tool` with async and idempotency_key, when it is one of the compile doors (it declares a job kind); else unchanged. */
export function withJobs(tool: Tool): Tool {
  const kind = tool.job;
  if (!kind) return tool;
  return {
    ...tool,
    description: `${tool.description} Optional: async (needs a key; then call get_job), callback_url, idempotency_key.`,
    inputSchema: Type.Object({ ...tool.inputSchema.properties, ...EXTRA_ARGUMENTS }),
    outputSchema: Type.Unsafe({ type: 'object', properties: {}, anyOf: [tool.outputSchema, AcceptedBody] }),
    run: async (args, context) => {
      tool.check(args);
      const { async, callback_url, idempotency_key, ...rest } = args;
      const request = asyncRequest(args, 'Arguments are invalid');
      const work = async (): Promise<ToolReply> => {
        const outcome = await context.services.asyncJobs.answer(callerOf(context), kind, request, (hooks) => tool.run(rest, context, hooks), (reply) => reply.body);
        return outcome.accepted ? acceptedReply(outcome.job) : outcome.body;
      };
      const caller = context.caller;
      if (idempotency_key === undefined || caller?.kind !== 'account') return work();
      if (typeof idempotency_key !== 'string') {
        throw errors.invalid_idempotency_key('idempotency_key must be 1 to 255 visible ASCII characters.', { limit: 255 });
      }
      const print = fingerprint(`mcp ${tool.name}`, { ...rest, ...(async !== undefined ? { async } : {}), ...(callback_url !== undefined ? { callback_url } : {}) });
      let first: ToolReply | undefined;
      const outcome = await context.services.idempotency.once(caller.account.id, idempotency_key, print, async () => {
        try {
          first = await work();
          return { status: async === true ? 202 : 200, body: first.body };
        } catch (err) {
          if (!isServiceError(err)) throw err;
          return { status: err.status, body: err.body() };
        }
      });
      const body = isBody(outcome.body) ? outcome.body : {};
      if (outcome.status < 300) {
        if (first) return first;
        return isAccepted(body) ? acceptedReply(body) : tool.replay(body, context);
      }
      const { error, message, ...details } = body;
      throw restore(error as ErrorCode, String(message), details);
    },
  };
}

export const getJobTool = defineTool({
  name: 'get_job',
  title: 'Read an async job',
  description:
    'Reads a job started with async: true. status is queued, running, succeeded or failed; when done, `result` is the same body the synchronous call returns (pdf_url to give the user) and `error` the same error body. Webhook attempts are listed under `webhook`. Only the account that started the job can read it.',
  inputSchema: Type.Object({ job_id: Type.String({ description: 'The job_id the async call returned' }) }),
  outputSchema: JobBody,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.asyncJobs.get(callerOf(context), args.job_id),
  summarize: ({ job_id, status, result, error }) => {
    if (result && 'pdf_url' in result && result.pdf_url) return `Job ${job_id} succeeded: ${String(result.pdf_url)}`;
    if (error) return `Job ${job_id} failed: ${'error' in error ? String(error.error) : 'undefined'}: ${'message' in error ? String(error.message) : 'undefined'}`;
    return `Job ${job_id} is ${status}.`;
  },
});
