import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpContent } from '../../shared/protocol/mcp.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * A tool result as the agent takes it: text stays text, images stay images (the agent decides
 * whether its model can see them), and everything else (audio, embedded resources, links,
 * structured content) becomes text that says what it is. A linked resource names its server and
 * the call that reads it (mcp_read_resource), so the model can open it.
 */
export function mapToolResult(
  raw: unknown,
  server: string,
): { content: McpContent[]; is_error: boolean } {
  const parsed = CallToolResultSchema.safeParse(raw);
  if (!parsed.success)
    return {
      content: [
        {
          type: 'text',
          text: 'The MCP server answered with a result that is not a valid tool result.',
        },
      ],
      is_error: true,
    };
  const r = parsed.data;
  const content: McpContent[] = [];
  for (const c of r.content) {
    switch (c.type) {
      case 'text':
        content.push({ type: 'text', text: c.text });
        break;
      case 'image':
        if (IMAGE_TYPES.has(c.mimeType))
          content.push({ type: 'image', mime: c.mimeType, data: c.data });
        else
          content.push({
            type: 'text',
            text: `[image of type ${c.mimeType}, ${approxBytes(c.data)} bytes, in a format svc does not pass to models]`,
          });
        break;
      case 'audio':
        content.push({
          type: 'text',
          text: `[audio of type ${c.mimeType}, ${approxBytes(c.data)} bytes, not shown]`,
        });
        break;
      case 'resource': {
        const res = c.resource;
        if ('text' in res && typeof res.text === 'string')
          content.push({ type: 'text', text: `[resource ${res.uri}]\n${res.text}` });
        else
          content.push({
            type: 'text',
            text: `[resource ${res.uri}${res.mimeType ? ` (${res.mimeType})` : ''}: binary, ${'blob' in res && typeof res.blob === 'string' ? approxBytes(res.blob) : 0} bytes]`,
          });
        break;
      }
      case 'resource_link':
        content.push({ type: 'text', text: linkText(server, c) });
        break;
    }
  }
  if (content.length === 0 && r.structuredContent !== undefined)
    content.push({ type: 'text', text: JSON.stringify(r.structuredContent) });
  return { content, is_error: r.isError === true };
}

/** A resource link as the model reads it: what it is, where, and the exact call that opens it. */
export function linkText(
  server: string,
  link: { name: string; uri: string; description?: string; mimeType?: string },
): string {
  const about = [link.description, link.mimeType].filter(Boolean).join(', ');
  const call = JSON.stringify({ server, uri: link.uri });
  return `[resource link: ${link.name}${about ? ` (${about})` : ''} ${link.uri} on the MCP server "${server}"; read it with mcp_read_resource ${call}]`;
}

function approxBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}
