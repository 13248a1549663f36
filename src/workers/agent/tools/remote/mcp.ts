import { z } from 'zod';
import type { Config } from '../../../../shared/config/schema.js';
import type { McpChannel } from './mcp-channel.js';
import { readResourceTool } from './mcp-resources.js';
import { toResult, untilAborted } from './mcp-result.js';
import type { Tool } from '../registry.js';
import { own } from '../../../../shared/own.js';

/** The tool name other MCP clients use too, so permission rules written for them carry over. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** Leeway over the server's own timeout for the trip through the supervisor and the mcp worker. */
const IPC_MARGIN_MS = 5000;

/**
 * The tools of every connected MCP server, asked of the mcp worker (see McpChannel) when a
 * turn starts. None when no mcp worker runs (no enabled server): the agent works on without them.
 */
export async function mcpTools(channel: McpChannel, config: Config): Promise<Tool[]> {
  if (!Object.values(config.mcp.servers).some((s) => s.enabled)) return [];
  let listed;
  try {
    listed = await (await channel.endpoint()).request('mcp.tools', {});
  } catch {
    return [];
  }
  const tools = listed.servers.flatMap((s) => {
    const timeoutMs = (own(config.mcp.servers, s.name)?.timeout_seconds ?? 60) * 1000;
    return s.tools
      .filter((t) => /^[A-Za-z0-9_-]{1,128}$/.test(mcpToolName(s.name, t.name))) // providers refuse other tool names
      .map((t): Tool => mcpTool(channel, s.name, t.name, t.description, t.input_schema, timeoutMs));
  });
  // Reading resources, when a connected server has any: what a result links can be opened.
  const readable = listed.servers.filter((s) => s.resources).map((s) => s.name);
  if (readable.length > 0) tools.push(readResourceTool(channel, readable, config));
  return tools;
}

/**
 * A server's description as a person reads it: its first sentence or line, without Markdown marks
 * (the text is written for a model and often carries backticks, emphasis and links).
 */
export function plainPurpose(description: string): string {
  const first = description.trim().split(/\n\s*\n|\n/)[0] ?? '';
  const plain = first
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/(\*\*|__)(.*?)\1/g, '$2')
    .replace(/(^|\W)[*_]([^*_]+)[*_](?=\W|$)/g, '$1$2')
    .replace(/^#+\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(plain)?.[1] ?? plain;
  return sentence.length > 200 ? `${sentence.slice(0, 199)}…` : sentence;
}

function mcpTool(
  channel: McpChannel,
  server: string,
  tool: string,
  description: string,
  schema: Record<string, unknown>,
  timeoutMs: number,
): Tool {
  return {
    name: mcpToolName(server, tool),
    purpose: plainPurpose(description) || `The tool "${tool}" of the MCP server "${server}".`,
    description: `${description || tool} (from the MCP server "${server}")`,
    args: z.record(z.string(), z.unknown()),
    parameters: schema.type === 'object' ? schema : { type: 'object', properties: {} },
    run: async (args, ctx) => {
      const callId = `${ctx.turnId}:${ctx.callId}`;
      const endpoint = await channel.endpoint();
      const cancel = () =>
        void endpoint.request('mcp.cancel', { call_id: callId }).catch(() => undefined);
      ctx.signal.addEventListener('abort', cancel, { once: true });
      try {
        const call = endpoint.request(
          'mcp.call',
          { call_id: callId, server, tool, arguments: args as Record<string, unknown> },
          { timeoutMs: timeoutMs + IPC_MARGIN_MS },
        );
        const r = await untilAborted(call, ctx.signal);
        return toResult(r.content, r.is_error, ctx);
      } finally {
        ctx.signal.removeEventListener('abort', cancel);
      }
    },
  };
}
