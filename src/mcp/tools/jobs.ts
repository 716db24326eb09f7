// Async and idempotency for the MCP doors of compile, render and render_public_template
// (arguments `async`, `callback_url`, `idempotency_key`), and the get_job tool. The same
// JobService and IdempotencyStore as over HTTP; docs/async-and-webhooks.md.
import { Type, type TObject } from '@sinclair/typebox';
import type { CompileContext, CompileInput } from '../../compile/types.js';
import { errors, restore, isServiceError, invalidField, type ErrorCode } from '../../errors.js';
import { fingerprint } from '../../idempotency/store.js';
import { AcceptedBody } from '../../jobs/schemas.js';
import type { JobKind } from '../../jobs/store.js';
import { accountOf, callerOf, defineTool, type Body, type Tool, type ToolContext } from '../tool.js';

type Hooks = Pick<CompileContext, 'onAccepted'>;
type Runner = (args: Body, context: ToolContext, hooks: Hooks) => Promise<unknown>;

/** The async form of each tool's service call (the synchronous form stays the tool's own `run`). */
const RUNNERS: Record<string, { kind: JobKind; run: Runner }> = {
  compile: {
    kind: 'compile',
    run: (args, context, hooks) => context.services.compile.compile(callerOf(context), args as unknown as CompileInput, { via: 'mcp', ...hooks }),
  },
  render: {
    kind: 'render',
    run: (args, context, hooks) => context.services.templates.render(accountOf(context), String(args.id), args.data, hooks),
  },
  render_public_template: {
    kind: 'public_render',
    run: (args, context, hooks) => {
      const { slug, ...body } = args;
      return context.services.gallery.render(callerOf(context), String(slug), body, hooks);
    },
  },
};

const EXTRA_ARGUMENTS = {
  async: Type.Optional(
    Type.Boolean({ description: 'true: answer at once with {job_id, status, status_url}; read the outcome with get_job (or receive it at callback_url). Needs an API key.' }),
  ),
  callback_url: Type.Optional(Type.String({ description: 'With async: an https URL that receives a signed webhook when the job ends.' })),
  idempotency_key: Type.Optional(
    Type.String({ maxLength: 255, description: 'Any unique string (1-255 chars): a repeated call with the same key and arguments within 24 h returns the first result and is not charged again.' }),
  ),
};

/** `tool` with async and idempotency_key, when it is one of the compile doors; else unchanged. */
export function withJobs(tool: Tool): Tool {
  const runner = RUNNERS[tool.name];
  if (!runner) return tool;
  const output = tool.outputSchema ? ({ ...Type.Object({}), anyOf: [tool.outputSchema, AcceptedBody] } as unknown as TObject) : undefined;
  return {
    ...tool,
    description: `${tool.description} Optional: async (needs a key; then call get_job), callback_url, idempotency_key.`,
    inputSchema: Type.Object({ ...tool.inputSchema.properties, ...EXTRA_ARGUMENTS }),
    ...(output ? { outputSchema: output } : {}),
    run: async (args, context) => {
      const { async, callback_url, idempotency_key, ...rest } = args;
      if (async !== undefined && typeof async !== 'boolean') {
        throw invalidField('async', 'type', 'must be boolean', { lead: 'Arguments are invalid' });
      }
      if (callback_url !== undefined && async !== true) {
        throw invalidField('callback_url', 'dependencies', 'needs async: true', { lead: 'Arguments are invalid' });
      }
      const work = async (): Promise<Body> => {
        if (async !== true) return tool.run(rest, context);
        const accepted = await context.services.asyncJobs.start(callerOf(context), { kind: runner.kind, callbackUrl: callback_url }, (onAccepted) =>
          runner.run(rest, context, { onAccepted }),
        );
        return { ...accepted };
      };
      const caller = context.caller;
      if (idempotency_key === undefined || caller?.kind !== 'account') return work();
      if (typeof idempotency_key !== 'string') {
        throw errors.invalid_idempotency_key('idempotency_key must be 1 to 255 visible ASCII characters.', { limit: 255 });
      }
      const print = fingerprint(`mcp ${tool.name}`, { ...rest, ...(async !== undefined ? { async } : {}), ...(callback_url !== undefined ? { callback_url } : {}) });
      const outcome = await context.services.idempotency.once(caller.account.id, idempotency_key, print, async () => {
        try {
          return { status: async === true ? 202 : 200, body: await work() };
        } catch (err) {
          if (!isServiceError(err)) throw err;
          return { status: err.status, body: err.body() };
        }
      });
      if (outcome.status < 300) return outcome.body as Body;
      const { error, message, ...details } = outcome.body as Body;
      throw restore(error as ErrorCode, String(message), details);
    },
    summarize: (body) =>
      typeof body.status_url === 'string' && body.pdf_url === undefined
        ? `Accepted as job ${String(body.job_id)} (${String(body.status)}). Call get_job with this job_id until status is succeeded or failed.`
        : tool.summarize(body),
  };
}

export const getJobTool = defineTool({
  name: 'get_job',
  title: 'Read an async job',
  description:
    'Reads a job started with async: true. status is queued, running, succeeded or failed; when done, `result` is the same body the synchronous call returns (pdf_url to give the user) and `error` the same error body. Webhook attempts are listed under `webhook`. Only the account that started the job can read it.',
  inputSchema: Type.Object({ job_id: Type.String({ description: 'The job_id the async call returned' }) }),
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.asyncJobs.get(callerOf(context), String(args.job_id)),
  summarize: (body) => {
    const status = String(body.status);
    const result = body.result as Body | undefined;
    const error = body.error as Body | undefined;
    if (result?.pdf_url) return `Job ${String(body.job_id)} succeeded: ${String(result.pdf_url)}`;
    if (error) return `Job ${String(body.job_id)} failed: ${String(error.error)}: ${String(error.message)}`;
    return `Job ${String(body.job_id)} is ${status}.`;
  },
});
