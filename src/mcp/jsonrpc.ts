// JSON-RPC 2.0 framing for the stateless MCP door: one message or a batch in, the same shape
// out. Notifications (and client responses) get no reply; a body of only those gets none at all.

export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

export type RequestId = string | number;

/** A protocol-level failure; becomes the `error` member of a JSON-RPC response. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface RpcCall {
  method: string;
  params: Record<string, unknown>;
  /** Absent for a notification. */
  id?: RequestId;
}

/** Runs one method. Throw RpcError for protocol errors; anything else is -32603. */
export type Dispatch = (call: RpcCall) => Promise<unknown>;

export function errorResponse(id: RequestId | null, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// MCP narrows JSON-RPC: an id is a string or a number, never null.
function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

type Classified =
  | { kind: 'call'; call: RpcCall }
  | { kind: 'silent' }
  | { kind: 'invalid'; response: RpcResponse };

function classify(message: unknown): Classified {
  const invalid = (why: string, id: RequestId | null = null): Classified => ({
    kind: 'invalid',
    response: errorResponse(id, RPC.INVALID_REQUEST, `Invalid Request: ${why}`),
  });
  if (!isObject(message)) return invalid('each message must be a JSON object');
  const id = isId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"', id);
  if (!('method' in message)) {
    // A client's response to a server request: this server never sends any, so nothing to do.
    if ('id' in message && ('result' in message || 'error' in message)) return { kind: 'silent' };
    return invalid('"method" is required', id);
  }
  if (typeof message.method !== 'string' || message.method === '') {
    return invalid('"method" must be a non-empty string', id);
  }
  if ('id' in message && !isId(message.id)) return invalid('"id" must be a string or a number');
  const params = message.params;
  if (params !== undefined && typeof params !== 'object') {
    return invalid('"params" must be an object', id);
  }
  if (params === null || Array.isArray(params)) {
    // Structured but not by name: well-formed JSON-RPC, wrong for every MCP method.
    if (!('id' in message)) return { kind: 'silent' };
    return {
      kind: 'invalid',
      response: errorResponse(id, RPC.INVALID_PARAMS, 'Invalid params: "params" must be an object with named members'),
    };
  }
  const call: RpcCall = { method: message.method, params: (params ?? {}) as Record<string, unknown> };
  if ('id' in message) call.id = message.id as RequestId;
  return { kind: 'call', call };
}

async function answer(message: unknown, dispatch: Dispatch): Promise<RpcResponse | undefined> {
  const classified = classify(message);
  if (classified.kind === 'silent') return undefined;
  if (classified.kind === 'invalid') return classified.response;
  const { call } = classified;
  try {
    const result = await dispatch(call);
    return call.id === undefined ? undefined : { jsonrpc: '2.0', id: call.id, result };
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    return call.id === undefined ? undefined : errorResponse(call.id, err.code, err.message, err.data);
  }
}

/** Messages one batch may hold: enough for any agent, too few to fan out into a flood of compiles. */
export const MAX_BATCH = 50;

/**
 * Answers a raw request body. Returns the reply (an object, or an array for a batch), or
 * undefined when nothing is owed (only notifications): the HTTP door then sends 202.
 * `onInternal` turns an unexpected error into the -32603 response for that element alone.
 */
export async function handleBody(
  raw: string | undefined,
  dispatch: Dispatch,
  onInternal: (err: unknown, call: unknown) => void,
): Promise<RpcResponse | RpcResponse[] | undefined> {
  let parsed: unknown;
  try {
    if (raw === undefined || raw.trim() === '') throw new SyntaxError('the request body is empty');
    parsed = JSON.parse(raw);
  } catch (err) {
    return errorResponse(null, RPC.PARSE_ERROR, `Parse error: ${(err as Error).message}`);
  }

  const one = async (message: unknown): Promise<RpcResponse | undefined> => {
    try {
      return await answer(message, dispatch);
    } catch (err) {
      onInternal(err, message);
      if (!isObject(message) || !('id' in message)) return undefined; // a notification: nobody to tell
      const id = isId(message.id) ? message.id : null;
      return errorResponse(id, RPC.INTERNAL_ERROR, 'Internal error: the server failed to answer; retry later.');
    }
  };

  if (!Array.isArray(parsed)) return one(parsed);
  if (parsed.length === 0) return errorResponse(null, RPC.INVALID_REQUEST, 'Invalid Request: an empty batch');
  if (parsed.length > MAX_BATCH) {
    return errorResponse(null, RPC.INVALID_REQUEST, `Invalid Request: a batch of ${parsed.length} messages; send at most ${MAX_BATCH} at once`);
  }
  const replies = await Promise.all(parsed.map(one));
  const owed = replies.filter((reply): reply is RpcResponse => reply !== undefined);
  return owed.length === 0 ? undefined : owed;
}
