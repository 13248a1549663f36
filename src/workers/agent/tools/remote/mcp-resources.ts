import { z } from 'zod';
import type { Config } from '../../../../shared/config/schema.js';
import type {
  McpContent,
  McpResourceContent,
  McpResourceRef,
} from '../../../../shared/protocol/mcp.js';
import type { McpChannel } from './mcp-channel.js';
import { toResult, untilAborted } from './mcp-result.js';
import type { Tool } from '../registry.js';

export const READ_TOOL = 'mcp_read_resource';
/** What an attached resource puts in the message, at most (the model can read the rest with the tool). */
export const ATTACH_TEXT_CAP = 32 * 1024;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const IPC_MARGIN_MS = 5000;

/**
 * The name the permission rules judge a read by: one of the server's, so `mcp__github__*` in
 * permissions.yml covers reading github's resources as it covers its tools, and with no rule a
 * read asks like any of its tools. No MCP tool can be so named (svc passes on only names of
 * letters, digits, `_` and `-`).
 */
export function readPermissionName(server: string): string {
  return `mcp__${server}__resources/read`;
}

/**
 * mcp_read_resource: reads a resource of a connected server that offers resources, most often one
 * a tool result linked (`[resource link: … read it with mcp_read_resource {…}]`). Text comes
 * back as text (capped like any tool output, the rest in a file), images as images, other binary
 * parts described.
 */
export function readResourceTool(channel: McpChannel, servers: string[], config: Config): Tool {
  const args = z.object({
    server: z.enum(servers as [string, ...string[]]),
    uri: z.string().min(1).max(8192),
  });
  return {
    name: READ_TOOL,
    purpose:
      'Reads a file or document an MCP server offers (a resource), such as one a tool linked.',
    description: `Reads a resource of an MCP server by its URI: one a tool result linked ("[resource link: …]"), or one the user named. Servers with resources: ${servers.join(', ')}.`,
    args: args as z.ZodType<unknown>,
    subject: (a) => ({ as: readPermissionName((a as McpResourceRef).server) }),
    run: async (a, ctx) => {
      const { server, uri } = a as McpResourceRef;
      const timeoutMs = (config.mcp.servers[server]?.timeout_seconds ?? 60) * 1000;
      const endpoint = await channel.endpoint();
      const read = endpoint.request(
        'mcp.resource.read',
        { server, uri },
        { timeoutMs: timeoutMs + IPC_MARGIN_MS },
      );
      const r = await untilAborted(read, ctx.signal);
      return toResult(resourceParts(server, r.contents), false, ctx);
    },
  };
}

/** A read resource as tool-result content: a header per part, text inline, images as images. */
function resourceParts(server: string, contents: McpResourceContent[]): McpContent[] {
  if (contents.length === 0)
    return [{ type: 'text', text: `(the resource is empty on the MCP server "${server}")` }];
  return contents.flatMap((c): McpContent[] => {
    if (c.text !== undefined)
      return [{ type: 'text', text: `${header(server, c)}\n${c.text}${cutNote(c)}` }];
    if (c.blob && c.mime_type && IMAGE_TYPES.has(c.mime_type))
      return [
        { type: 'text', text: header(server, c) },
        { type: 'image', mime: c.mime_type, data: c.blob },
      ];
    return [{ type: 'text', text: `${header(server, c)}: binary, not shown` }];
  });
}

/**
 * The resources a person attached to a message, as the text the model reads with it: text inline
 * up to ATTACH_TEXT_CAP each, binary parts described.
 */
export function attachedText(ref: McpResourceRef, contents: McpResourceContent[]): string {
  const parts = contents.map((c) => {
    if (c.text === undefined) return `${header(ref.server, c)}: binary, not shown`;
    const cut = c.text.length > ATTACH_TEXT_CAP;
    const text = cut ? c.text.slice(0, ATTACH_TEXT_CAP) : c.text;
    const note =
      cut || c.truncated
        ? `\n[cut at ${text.length} characters of ${c.size} bytes; ${READ_TOOL} ${JSON.stringify(ref)} reads it whole]`
        : '';
    return `${header(ref.server, c)}\n${text}${note}`;
  });
  return parts.length > 0 ? parts.join('\n') : `${header(ref.server, { uri: ref.uri })}: empty`;
}

function header(server: string, c: { uri: string; mime_type?: string | null; size?: number }) {
  const about = [c.mime_type, c.size !== undefined ? `${c.size} bytes` : undefined]
    .filter(Boolean)
    .join(', ');
  return `[resource ${c.uri}${about ? ` (${about})` : ''} from the MCP server "${server}"]`;
}

function cutNote(c: McpResourceContent): string {
  return c.truncated ? `\n[cut: the server sent ${c.size} bytes; only the start is shown]` : '';
}
