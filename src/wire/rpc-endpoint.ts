// The seam between the HTTP door and the MCP door: HTTP carries JSON-RPC bodies to /mcp and
// back without knowing what answers them, so http/ never imports mcp/ (the app assembly,
// src/app.ts, hands the MCP server to the HTTP door as one of these).

/** Who sent a body: the request's headers (credentials, Origin) and client address. */
export interface RpcCaller {
  headers: Record<string, string | string[] | undefined>;
  ip: string;
  /** The client asked for the extension tools too (`/mcp?extensions=1`, docs/mcp.md). */
  extensions: boolean;
}

export interface RpcEndpoint {
  /**
   * Answers one raw request body: the JSON-RPC reply, or undefined when nothing is owed (only
   * notifications). `onInternal` hears of an unexpected error, answered as -32603.
   */
  answer(raw: string | undefined, caller: RpcCaller, onInternal: (err: unknown, message: unknown) => void): Promise<unknown>;
}
