// What an MCP tool is: a thin door onto one service call. A tool parses its arguments with the
// same schema its HTTP route uses, calls the same service function, and hands back the HTTP
// success body (or the HTTP error body, marked isError) to the agent. A tool is declared with
// defineTool: its argument and body types follow from its schemas, so the schemas it
// advertises and the code that runs cannot disagree.
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { AccountCaller, Caller } from '../accounts/caller.js';
import type { CompileContext } from '../compile/types.js';
import type { AssetNameAt } from '../wire/json-safety.js';
import type { JobKind } from '../jobs/store.js';
import type { Services } from '../services.js';
import { guard } from './checks.js';
import type { ContentBlock } from './results.js';

/** `none`: no key is read (like the public gallery GETs); `optional`/`required` as on HTTP. */
export type ToolAuth = 'none' | 'optional' | 'required';

export interface ToolContext {
  services: Services;
  /** Resolved per SPEC §5 before `run`; null for `auth: 'none'`. */
  caller: Caller | null;
}

/** What the async door (jobs.ts) passes to a service call it runs as a job. */
export type ToolHooks = Pick<CompileContext, 'onAccepted'>;

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export type Body = Record<string, unknown>;

/** A body with the text the agent reads next to it, and content blocks after the text. */
export interface ToolReply {
  body: Body;
  text: string;
  attachments: ContentBlock[];
}

/** What a tool module declares; `Args` is the checked schema, `inputSchema` unless `argumentSchema` is given. */
export interface ToolSpec<In extends TObject, Out extends TObject, Args extends TSchema> {
  name: string;
  title: string;
  /** Written for an agent: what it does, its limits, what to do when it fails. */
  description: string;
  /** Advertised to clients; an object schema (MCP requires `type: "object"` at the root). */
  inputSchema: In;
  /**
   * Checked before `run`, with the options Fastify uses for HTTP bodies. Given when the route's
   * schema is looser than the advertised one (as compile's is, so that every door gets SPEC's
   * codes from the service rather than a generic validation error).
   */
  argumentSchema?: Args;
  /** The success body, the route's response schema; advertised together with the error body (see registry.ts). */
  outputSchema: Out;
  auth: ToolAuth;
  /** Where the arguments name asset files: a NUL byte there is invalid_asset_filename (SPEC §2.1). */
  assetNames?: AssetNameAt;
  /** Listed to callers without credentials (SPEC §4.7). */
  public: boolean;
  annotations?: ToolAnnotations;
  /** The job kind of the tool's async form (`async: true`, see jobs.ts); unset when it has none. */
  job?: JobKind;
  run(args: Static<Args>, context: ToolContext, hooks: ToolHooks): Promise<Static<Out>>;
  /** The short text the agent reads next to the structured body. */
  summarize(body: Static<Out>): string;
  /** Content blocks after the text, such as the file of get_asset or a compile's first page image. */
  attachments?(body: Static<Out>, context: ToolContext): ContentBlock[] | Promise<ContentBlock[]>;
}

/** A tool with its types erased, as the registry and the async door handle it. */
export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: TObject;
  outputSchema: TSchema;
  auth: ToolAuth;
  assetNames?: AssetNameAt;
  public: boolean;
  annotations?: ToolAnnotations;
  job?: JobKind;
  /** Throws validation_failed, as Fastify does for a body, unless the arguments fit the checked schema. */
  check(args: Body): void;
  run(args: Body, context: ToolContext, hooks?: ToolHooks): Promise<ToolReply>;
  /** The reply for a body this tool answered before (an idempotent replay). */
  replay(body: Body, context: ToolContext): Promise<ToolReply>;
}

export function defineTool<In extends TObject, Out extends TObject, Args extends TSchema = In>(spec: ToolSpec<In, Out, Args>): Tool {
  const { run, summarize, attachments, argumentSchema, ...meta } = spec;
  const parse = guard<Static<Args>>(argumentSchema ?? spec.inputSchema);
  const isOutput = guard<Static<Out>>(spec.outputSchema).is;
  const reply = async (body: Static<Out>, context: ToolContext): Promise<ToolReply> => ({
    body,
    text: summarize(body),
    attachments: (await attachments?.(body, context)) ?? [],
  });
  return {
    ...meta,
    check: (args) => void parse.strict(args),
    run: async (args, context, hooks = {}) => reply(await run(parse.strict(args), context, hooks), context),
    // A body stored by an earlier call has the output shape; its text is then the usual one.
    replay: async (body, context) => (isOutput(body) ? reply(body, context) : { body, text: `Result of ${spec.name} (a repeated call).`, attachments: [] }),
  };
}

/** The caller of a tool declared `auth: 'optional'` or `'required'`. */
export function callerOf(context: ToolContext): Caller {
  if (!context.caller) throw new Error('tool reads a caller but declares auth: none');
  return context.caller;
}

/** The account calling a tool declared `auth: 'required'`. */
export function accountOf(context: ToolContext): AccountCaller {
  const caller = callerOf(context);
  if (caller.kind !== 'account') throw new Error("tool must declare auth: 'required'");
  return caller;
}
