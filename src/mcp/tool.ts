// What an MCP tool is: a thin door onto one service call. A tool parses its arguments with the
// same schema its HTTP route uses, calls the same service function, and hands back the HTTP
// success body (or the HTTP error body, marked isError) to the agent.
import type { TObject, TSchema } from '@sinclair/typebox';
import type { AccountCaller, Caller } from '../accounts/caller.js';
import type { AssetNameAt } from '../http/edge.js';
import type { Services } from '../services.js';
import type { ContentBlock } from './results.js';

/** `none`: no key is read (like the public gallery GETs); `optional`/`required` as on HTTP. */
export type ToolAuth = 'none' | 'optional' | 'required';

export interface ToolContext {
  services: Services;
  /** Resolved per SPEC §5 before `run`; null for `auth: 'none'`. */
  caller: Caller | null;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export type Body = Record<string, unknown>;

export interface Tool {
  name: string;
  title: string;
  /** Written for an agent: what it does, its limits, what to do when it fails. */
  description: string;
  /** Advertised to clients; an object schema (MCP requires `type: "object"` at the root). */
  inputSchema: TObject;
  /**
   * Checked before `run`, with the options Fastify uses for HTTP bodies. Defaults to
   * `inputSchema`; `null` when the service validates the input itself (as compile does, so
   * that every door gets SPEC's codes rather than a generic validation error).
   */
  argumentSchema?: TSchema | null;
  /** The success body; advertised together with the error body (see registry.ts). */
  outputSchema?: TObject;
  auth: ToolAuth;
  /** Where the arguments name asset files: a NUL byte there is invalid_asset_filename (SPEC §2.1). */
  assetNames?: AssetNameAt;
  /** Listed to callers without credentials (SPEC §4.7). */
  public: boolean;
  annotations?: ToolAnnotations;
  run(args: Body, context: ToolContext): Promise<Body>;
  /** The short text the agent reads next to the structured body. */
  summarize(body: Body): string;
  /** Content blocks after the text, such as the file of get_asset. */
  attachments?(body: Body): ContentBlock[];
}

export function defineTool(tool: Tool): Tool {
  return tool;
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
