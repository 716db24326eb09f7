// POST /mcp: the MCP endpoint (SPEC §4.7), stateless JSON-RPC 2.0 over Streamable HTTP with
// plain JSON replies. It parses its own bodies so malformed JSON is a JSON-RPC parse error
// (-32700), not the app's 400 invalid_json; keys are checked per tool call, so a bad key is a
// tool error and never an HTTP 401. A browser Origin not allowed (origins.ts) is a 403.
import { errors as serviceErrors } from '../errors.js';
import { Type } from '@sinclair/typebox';
import { checkedByService } from '../documented.js';
import { checkMcpOrigin } from './origins.js';
import type { Services } from '../services.js';
import type { RpcEndpoint } from '../wire/rpc-endpoint.js';
import { ErrorBody } from '../wire/schemas.js';
import type { App } from './types.js';

// Described, not validated: the handler reads the raw text and answers JSON-RPC errors itself.
const JsonRpcRequest = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer(), Type.Null()], { description: 'Absent in a notification' })),
    method: Type.String({ examples: ['tools/call'] }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: 'A JSON-RPC 2.0 request or notification' },
);
const JsonRpcBody = checkedByService(
  Type.Union([JsonRpcRequest, Type.Array(JsonRpcRequest, { minItems: 1 })], {
    description: 'A JSON-RPC 2.0 request or notification, or an array of them (batch)',
    examples: [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'compile', arguments: { latex: '\\documentclass{article}\\begin{document}Hi\\end{document}' } } }],
  }),
);
const JsonRpcResponse = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })),
  },
  { description: 'A JSON-RPC 2.0 response: `result` or `error`' },
);
const JsonRpcReply = Type.Union([JsonRpcResponse, Type.Array(JsonRpcResponse)], {
  description: 'A JSON-RPC 2.0 response, or an array of them for a batch',
});
const McpQuery = Type.Object({
  extensions: Type.Optional(
    Type.Unsafe<'0' | '1'>({
      type: 'string',
      enum: ['0', '1'],
      description: '1: tools/list also lists the extension tools (validate, template versions; docs/mcp.md), which are callable either way',
    }),
  ),
});
const MethodNotAllowed = Type.Object(ErrorBody.properties, {
  additionalProperties: true,
  description: '`method_not_allowed`: send JSON-RPC messages with POST',
  headers: { Allow: Type.Literal('POST', { description: 'The one method /mcp answers' }) },
});

export function mcpRoutes(app: App, services: Services, endpoint: RpcEndpoint): void {

  void app.register(async (scope) => {
    // Every body reaches the handler as text, whatever its content type; the handler parses it.
    // The Origin rule (origins.ts) comes before anything else, the method included.
    scope.addHook('onRequest', async (req) => checkMcpOrigin(services.config, req.headers.origin));
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    scope.post(
      '/mcp',
      {
        config: { ownBodyParser: true, errors: ['origin_not_allowed'] },
        schema: {
          operationId: 'mcp',
          summary: 'MCP endpoint: one JSON-RPC 2.0 request or a batch (auth optional)',
          description:
            'Stateless Streamable HTTP: no session, no handshake required. Tools (SPEC §4.7): compile, the public gallery, and with an API key templates, assets, render, usage and get_job; with `?extensions=1` also the extension tools (validate, template versions). ' +
            'A request carrying an Origin header (a browser) is refused with 403 origin_not_allowed unless that origin is allowed (QUIRE_MCP_ALLOWED_ORIGINS, by default the base URL).',
          tags: ['mcp'],
          security: [{}, { bearer: [] }, { apiKey: [] }],
          querystring: McpQuery,
          body: JsonRpcBody,
          response: { 200: JsonRpcReply, 202: { type: 'null', description: 'Only notifications: nothing to answer' } },
        },
      },
      async (req, reply) => {
        const raw = typeof req.body === 'string' ? req.body : undefined;
        const extensions = (req.query as { extensions?: string }).extensions === '1';
        const answer = await endpoint.answer(raw, { headers: req.headers, ip: req.ip, extensions }, (err, message) =>
          req.log.error({ err, method: (message as { method?: unknown } | null)?.method }, 'MCP method failed'),
        );
        if (answer === undefined) return reply.code(202).send();
        return reply.code(200).type('application/json').send(answer);
      },
    );

    const notAllowed = async (req: { method: string }) => {
      throw serviceErrors.method_not_allowed(`${req.method} /mcp is not supported: POST JSON-RPC messages (nothing to stream).`, {}, { allow: 'POST' });
    };
    scope.get(
      '/mcp',
      {
        config: { errors: ['method_not_allowed', 'origin_not_allowed'] },
        schema: {
          operationId: 'openMcpStream',
          security: [],
          summary: 'Not supported: the endpoint is stateless and streams nothing (SPEC §4.7)',
          tags: ['mcp'],
          response: { 405: MethodNotAllowed },
        },
      },
      notAllowed,
    );
    scope.route({ method: ['DELETE', 'PUT', 'PATCH'], url: '/mcp', schema: { hide: true }, handler: notAllowed });
  });
}
