// The tool registry: which tools a caller sees, and calling one with the HTTP route's rules.
import type { TSchema } from '@sinclair/typebox';
import AjvModule, { type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { identify } from '../accounts/caller.js';
import { INTERNAL_ERROR_BODY, isServiceError, validationFailed } from '../errors.js';
import { assertSafeJson } from '../http/edge.js';
import { diskFault } from '../storage/faults.js';
import { fieldErrors } from '../http/errors.js';
import { ErrorBody } from '../http/schemas.js';
import type { Services } from '../services.js';
import { RPC, RpcError } from './jsonrpc.js';
import { failure, success, type ToolResult } from './results.js';
import type { Body, Tool } from './tool.js';

type Headers = Record<string, string | string[] | undefined>;

// The options buildApp gives Fastify's validator: bodies are checked as sent, every problem reported.
const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
const ajv = addFormats(new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true, strict: false }));

/** Plain JSON Schema (TypeBox's symbol keys dropped), as sent in tools/list. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export interface CallContext {
  headers: Headers;
  ip: string;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly validators = new Map<string, ValidateFunction | null>();

  constructor(
    private readonly services: Services,
    tools: Tool[],
  ) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`duplicate MCP tool ${tool.name}`);
      this.tools.set(tool.name, tool);
      const schema = tool.argumentSchema === undefined ? tool.inputSchema : tool.argumentSchema;
      this.validators.set(tool.name, schema === null ? null : ajv.compile(plain(schema)));
    }
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /**
   * SPEC §4.7 and §5.5: the full set when credentials are present, valid or not; the public
   * tools otherwise. Visibility is cosmetic: calling a keyed tool without a key is a tool error.
   */
  list(withCredentials: boolean): Array<Record<string, unknown>> {
    return [...this.tools.values()]
      .filter((tool) => withCredentials || tool.public)
      .map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: plain(tool.inputSchema),
        ...(tool.outputSchema
          ? {
              // structuredContent is the success body, or the error body when isError is set
              // (clients validate it either way, so the schema admits both).
              outputSchema: {
                type: 'object',
                anyOf: [plain(tool.outputSchema), plain(ErrorBody)],
              },
            }
          : {}),
        annotations: { title: tool.title, ...tool.annotations },
      }));
  }

  async call(params: Record<string, unknown>, context: CallContext): Promise<ToolResult> {
    const { name, arguments: args } = params;
    if (typeof name !== 'string') throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "name" must be a tool name');
    const tool = this.tools.get(name);
    if (!tool) {
      throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool "${name}"; call tools/list for the available tools`, {
        tools: this.names(),
      });
    }
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "arguments" must be an object');
    }
    const started = this.services.clock.ms();
    let outcome = 'ok';
    try {
      const caller =
        tool.auth === 'none'
          ? null
          : await identify(this.services.accounts, context.headers, context.ip, { required: tool.auth === 'required' });
      // As on HTTP, after the key and before anything recursive (structuredClone, Ajv, walkers).
      assertSafeJson(args ?? {}, { what: 'The arguments object', assetNameAt: tool.assetNames });
      const input = structuredClone((args ?? {}) as Body);
      this.validate(tool, input);
      const body = await tool.run(input, { services: this.services, caller });
      return success(body, tool.summarize(body), tool.attachments?.(body));
    } catch (err) {
      const known = isServiceError(err) ? err : diskFault(err);
      if (known) {
        outcome = known.code;
        return failure(known.body(), known.status);
      }
      outcome = 'internal_error';
      this.services.log.error({ err, tool: tool.name }, 'MCP tool failed');
      return failure({ ...INTERNAL_ERROR_BODY }, 500);
    } finally {
      this.services.log.info({ tool: tool.name, outcome, ms: Math.round(this.services.clock.ms() - started) }, 'MCP tool call');
    }
  }

  private validate(tool: Tool, input: Body): void {
    const validator = this.validators.get(tool.name);
    if (!validator || validator(input)) return;
    const fields = fieldErrors(validator.errors ?? [], 'body');
    throw validationFailed(fields, { lead: 'Arguments are invalid' });
  }
}
