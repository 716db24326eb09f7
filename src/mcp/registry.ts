// The tool registry: which tools a caller sees, and calling one with the HTTP route's rules.
import { identify } from '../accounts/caller.js';
import { INTERNAL_ERROR_BODY, isServiceError } from '../errors.js';
import { assertSafeJson } from '../wire/json-safety.js';
import { diskFault } from '../storage/faults.js';
import { ErrorBody } from '../wire/schemas.js';
import type { Services } from '../services.js';
import { plain } from './checks.js';
import { RPC, RpcError } from './jsonrpc.js';
import { failure, success, type ToolResult } from './results.js';
import type { Body, Tool } from './tool.js';

type Headers = Record<string, string | string[] | undefined>;

export interface CallContext {
  headers: Headers;
  ip: string;
  /** List the extension tools too (see SPEC_TOOLS). */
  extensions: boolean;
}

/**
 * The tools SPEC §4.7 lists (its four public ones, and with credentials ten more), plus
 * `get_job` (docs/async-and-webhooks.md). Every other tool is an extension of ours: listed
 * when the client asks for it (docs/mcp.md), and callable either way.
 */
const SPEC_TOOLS: ReadonlySet<string> = new Set([
  'compile', 'list_public_templates', 'get_public_template', 'render_public_template',
  'render', 'usage', 'list_templates', 'get_template', 'save_template', 'delete_template',
  'list_assets', 'get_asset', 'save_asset', 'delete_asset',
  'get_job',
]);

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(
    private readonly services: Services,
    tools: Tool[],
  ) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`duplicate MCP tool ${tool.name}`);
      this.tools.set(tool.name, tool);
    }
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /**
   * SPEC §4.7 and §5.5: the full set when credentials are present, valid or not; the public
   * tools otherwise; the extension tools among them only when asked for. Visibility is
   * cosmetic: calling a keyed tool without a key is a tool error, an unlisted tool still runs.
   */
  list(withCredentials: boolean, extensions: boolean): Array<Record<string, unknown>> {
    return [...this.tools.values()]
      .filter((tool) => withCredentials || tool.public)
      .filter((tool) => extensions || SPEC_TOOLS.has(tool.name))
      .map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: plain(tool.inputSchema),
        // structuredContent is the success body, or the error body when isError is set
        // (clients validate it either way, so the schema admits both).
        outputSchema: { type: 'object', anyOf: [plain(tool.outputSchema), plain(ErrorBody)] },
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
      // The tool checks them against its argument schema first thing (see defineTool).
      const input = structuredClone((args ?? {}) as Body);
      const reply = await tool.run(input, { services: this.services, caller });
      return success(reply.body, reply.text, reply.attachments);
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
}
