import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/**
 * The MCP server of bench/mcp.ts, written with the SDK, over stdio: one tool, `stamp`, that
 * answers the moment its handler ran (process.hrtime, ns) and the `seq` it was given. The gap
 * between the stamps of two calls in a row is one round trip of the caller, measured on this
 * process's clock alone, so it is the same measure for svc and for a direct SDK client.
 */
const server = new McpServer({ name: 'bench-stamp', version: '1.0.0' });
server.registerTool(
  'stamp',
  {
    description: 'Answers when it ran (ns) and the seq it was given.',
    inputSchema: { seq: z.number() },
  },
  ({ seq }) => ({
    content: [{ type: 'text', text: `${seq} ${process.hrtime.bigint()}` }],
  }),
);
await server.connect(new StdioServerTransport());
