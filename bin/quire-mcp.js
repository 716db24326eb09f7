#!/usr/bin/env node
// `quire-mcp`: the same as `quire mcp`, an MCP server over stdio in front of a Quire server.
process.argv.splice(2, 0, 'mcp');
await import('./quire.js');
