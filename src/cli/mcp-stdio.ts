// `quire mcp`: an MCP server over stdio for desktop clients and IDEs, in front of a Quire server
// (QUIRE_URL, QUIRE_API_KEY). It forwards every JSON-RPC message to that server's stateless
// /mcp endpoint, so its tools, resources and prompts are exactly the server's (the extension
// tools listed too: `?extensions=1`). stdout carries JSON-RPC only (one message per line); logs
// go to stderr. It ends on stdin EOF (after the answers in flight) or SIGTERM. When the server
// cannot be reached, a tool call gets a tool error saying so and any other request a JSON-RPC
// error: the client never waits in vain. Its timeout covers the whole answer (headers and body)
// and a line over QUIRE_MCP_MAX_MESSAGE_MB is refused without being held, so nothing on stdin or
// from the server makes it wait longer.
import type { McpProxyConfig } from '../config.js';
import { API_VERSION } from '../version.js';
import { readBoundedLines } from './stdio-lines.js';

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;
/** The newest MCP revision this proxy answers initialize with when the server is down. */
const FALLBACK_PROTOCOL = '2025-06-18';

function log(line: string): void {
  process.stderr.write(`quire mcp: ${line}\n`);
}

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function unreachable(config: McpProxyConfig, err: unknown, timedOut: boolean): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = timedOut ? `no answer within ${config.timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
  return `The Quire server at ${config.endpoint.origin} could not be reached (${why}). Check that it is running and that QUIRE_URL is right, then retry.`;
}

/** The answer to `message` when the server gave none: a tool error for a tool call, else a JSON-RPC error. */
function failure(message: Message, text: string): unknown {
  if (message.method === 'tools/call') {
    return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }], isError: true } };
  }
  if (message.method === 'initialize') {
    // Answered here so the client can start; every later call says what is wrong.
    const asked = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        protocolVersion: typeof asked === 'string' ? asked : FALLBACK_PROTOCOL,
        capabilities: { tools: {}, resources: {}, prompts: {} },
        serverInfo: { name: 'quire', title: 'Quire', version: API_VERSION },
        instructions: text,
      },
    };
  }
  return { jsonrpc: '2.0', id: message.id, error: { code: INTERNAL_ERROR, message: text } };
}

/** The server's /mcp with the extension tools listed: a local door shows every tool (docs/mcp.md). */
function target(config: McpProxyConfig): URL {
  const url = new URL(config.endpoint);
  url.searchParams.set('extensions', '1');
  return url;
}

async function forward(config: McpProxyConfig, line: string, message: Message, signal: AbortSignal): Promise<void> {
  const isRequest = message.id !== undefined && message.id !== null;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  let status: number;
  let text: string;
  // One controller per request with a timer this function holds: Node 20 lets a timeout signal
  // combined by AbortSignal.any be garbage-collected before it fires (a 20 MB line's garbage did),
  // and the wait then lasted until the server hung up. The timer runs until the body is read.
  const ask = new AbortController();
  let timedOut = false;
  const clock = setTimeout(() => {
    timedOut = true;
    ask.abort();
  }, config.timeoutMs);
  const stopAsking = () => ask.abort();
  signal.addEventListener('abort', stopAsking, { once: true });
  try {
    const res = await fetch(target(config), { method: 'POST', headers, body: line, signal: ask.signal });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (signal.aborted) return;
    const why = unreachable(config, err, timedOut);
    log(why);
    if (isRequest) send(failure(message, why));
    return;
  } finally {
    clearTimeout(clock);
    signal.removeEventListener('abort', stopAsking);
  }
  if (status === 202 || text === '') return;
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (status === 200 && answer !== undefined) return send(answer);
  const body = answer as { message?: unknown } | undefined;
  const why = `The Quire server answered HTTP ${status}${typeof body?.message === 'string' ? `: ${body.message}` : ''}.`;
  log(why);
  if (isRequest) send(failure(message, why));
}

/** Runs until stdin ends or SIGTERM; resolves to the exit code. */
export function runStdioProxy(config: McpProxyConfig): Promise<number> {
  const stop = new AbortController();
  const inFlight = new Set<Promise<void>>();
  return new Promise((resolve) => {
    let stopReading = () => {};
    const finish = (code: number) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onTerm);
      resolve(code);
    };
    const onTerm = () => {
      stop.abort();
      stopReading();
      finish(0);
    };
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onTerm);
    // Said once the signal handlers are in place: from here on SIGTERM ends it cleanly.
    log(`forwarding to ${config.endpoint.href}${config.apiKey ? ' with an API key' : ' without an API key'}`);
    const onLine = (line: string) => {
      if (line.trim() === '') return;
      let message: Message;
      try {
        message = JSON.parse(line) as Message;
      } catch {
        send({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'Parse error: each line must be one JSON-RPC message' } });
        return;
      }
      const task = forward(config, line, message ?? {}, stop.signal).catch((err: unknown) => log(`unexpected: ${(err as Error).message}`));
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
    };
    const tooLong = (id: string | number | null, bytes: number) => {
      const limit = config.maxMessageBytes / 1024 / 1024;
      const why = `A message of ${(bytes / 1024 / 1024).toFixed(1)} MB is over this proxy's limit of ${limit} MB (QUIRE_MCP_MAX_MESSAGE_MB); it was not forwarded.`;
      log(why);
      send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: why } });
    };
    const onEnd = () => {
      if (stop.signal.aborted) return;
      // stdin ended: answer what was asked, then stop.
      void Promise.allSettled([...inFlight]).then(() => finish(0));
    };
    stopReading = readBoundedLines(process.stdin, config.maxMessageBytes, { line: onLine, tooLong, end: onEnd });
  });
}
