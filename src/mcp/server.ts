// The MCP methods of the stateless endpoint. Each request stands alone: no session, and no
// initialize handshake required (initialize is still answered for clients that send it).
import { anonymousTierPhrase } from '../quota/prose.js';
import { hasCredentials } from '../accounts/caller.js';
import { isServiceError } from '../errors.js';
import { assertSafeJson } from '../wire/json-safety.js';
import type { Services } from '../services.js';
import { RPC, RpcError, type Dispatch, type RpcCall } from './jsonrpc.js';
import type { Prompts } from './prompts.js';
import type { CallContext, ToolRegistry } from './registry.js';
import type { Resources } from './resources.js';

/** Newest first. An unknown revision asked for gets the newest. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** What `initialize` tells the agent; `validate` is named only where it is listed. */
const instructions = (extensions: boolean) => [
  'Quire compiles LaTeX into PDF. Call `compile` with a complete LaTeX document; the result holds a pdf_url',
  ...(extensions ? ['to give the user. Call `validate` first (free, no quota) when unsure a document compiles here.'] : ['to give the user.']),
  'When a compile fails, the result has isError and a `diagnosis` whose `suggested_fix` is mechanical:',
  'apply it to the source and compile again. `warnings` on a success name what the document could still fix, each with its `fix`.',
  'Relay any `warning` to the user. Without an API key, compiles are limited',
  `(${anonymousTierPhrase()}). The public gallery (\`list_public_templates\`, \`get_public_template\`,`,
  '`render_public_template`) turns JSON data into finished documents such as invoices, reports and CVs.',
].join(' ');

const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
};

export class McpServer {
  constructor(
    private readonly services: Services,
    private readonly version: string,
    private readonly tools: ToolRegistry,
    private readonly resources: Resources,
    private readonly prompts: Prompts,
  ) {}

  private serverInfo() {
    return { name: 'quire', title: 'Quire', version: this.version };
  }

  /** The dispatcher for one HTTP request's messages. */
  dispatcher(context: CallContext): Dispatch {
    return (call) => this.dispatch(call, context);
  }

  private async dispatch(call: RpcCall, context: CallContext): Promise<unknown> {
    const { params } = call;
    // tools/call checks its arguments itself (a tool error the agent can act on); other methods
    // get the same bound here, before anything (even String() of an array) recurses into params.
    if (call.method !== 'tools/call') checkParams(params);
    const withCredentials = hasCredentials(context.headers);
    switch (call.method) {
      case 'initialize': {
        const asked = params.protocolVersion;
        if (asked !== undefined && typeof asked !== 'string') {
          throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string');
        }
        const supported = (PROTOCOL_VERSIONS as readonly string[]).includes(asked ?? '');
        return {
          protocolVersion: supported ? asked : PROTOCOL_VERSIONS[0],
          capabilities: CAPABILITIES,
          serverInfo: this.serverInfo(),
          instructions: instructions(context.extensions),
        };
      }
      case 'server/discover':
        return {
          supportedVersions: [...PROTOCOL_VERSIONS],
          capabilities: CAPABILITIES,
          serverInfo: this.serverInfo(),
          instructions: instructions(context.extensions),
        };
      case 'ping':
        return {};
      case 'notifications/initialized':
      case 'notifications/cancelled':
      case 'notifications/progress':
      case 'notifications/roots/list_changed':
        if (call.id !== undefined) throw new RpcError(RPC.INVALID_REQUEST, `Invalid Request: ${call.method} is a notification; send it without an id`);
        return undefined;
      case 'tools/list':
        checkCursor(params);
        return { tools: this.tools.list(withCredentials, context.extensions) };
      case 'tools/call':
        return this.tools.call(params, context);
      case 'resources/list':
        checkCursor(params);
        return { resources: await this.resources.list() };
      case 'resources/templates/list':
        checkCursor(params);
        return { resourceTemplates: this.resources.templates() };
      case 'resources/read': {
        if (typeof params.uri !== 'string') throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "uri" must be a string');
        return { contents: await this.resources.read(params.uri) };
      }
      case 'prompts/list':
        checkCursor(params);
        return { prompts: this.prompts.list() };
      case 'prompts/get':
        return this.prompts.get(params.name, params.arguments);
      default:
        this.services.log.debug({ method: call.method }, 'unknown MCP method');
        throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${call.method}`);
    }
  }
}

function checkParams(params: Record<string, unknown>): void {
  try {
    assertSafeJson(params, { what: 'The params object' });
  } catch (err) {
    if (!isServiceError(err)) throw err;
    throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${err.message}`, err.body());
  }
}

// Lists are short and sent whole: no page follows, so any cursor is one this server never gave.
function checkCursor(params: Record<string, unknown>): void {
  if (params.cursor !== undefined) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: unknown cursor (lists are sent whole)');
}
