import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { scrub } from '../../shared/log.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import type {
  McpPrompt,
  McpPromptResult,
  McpResource,
  McpResourceContent,
} from '../../shared/protocol/mcp.js';

/** Pages are followed up to this many entries: a server cannot make a list endless. */
const MAX_ENTRIES = 1000;
/** What one read passes on (all parts together); the rest is cut or left out, and says so. */
export const READ_CAP_BYTES = 2 * 1024 * 1024;
/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

type Opts = { timeout: number };

/**
 * Resources, templates and prompts of one connected server, in svc's shapes. A server that
 * does not declare the capability has none (it is not asked).
 */
export async function listResources(client: Client, opts: Opts) {
  if (!client.getServerCapabilities()?.resources) return { resources: [], templates: [] };
  const resources: McpResource[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : undefined, opts);
    for (const r of page.resources)
      resources.push({
        uri: r.uri,
        name: r.name,
        title: r.title ?? null,
        description: r.description ?? null,
        mime_type: r.mimeType ?? null,
        size: r.size ?? null,
      });
    cursor = page.nextCursor;
  } while (cursor && resources.length < MAX_ENTRIES);
  const templates = [];
  cursor = undefined;
  do {
    const page = await client.listResourceTemplates(cursor ? { cursor } : undefined, opts);
    for (const t of page.resourceTemplates)
      templates.push({
        uri_template: t.uriTemplate,
        name: t.name,
        title: t.title ?? null,
        description: t.description ?? null,
        mime_type: t.mimeType ?? null,
      });
    cursor = page.nextCursor;
  } while (cursor && templates.length < MAX_ENTRIES);
  return { resources, templates };
}

export async function listPrompts(client: Client, opts: Opts): Promise<McpPrompt[]> {
  if (!client.getServerCapabilities()?.prompts) return [];
  const prompts: McpPrompt[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listPrompts(cursor ? { cursor } : undefined, opts);
    for (const p of page.prompts)
      prompts.push({
        name: p.name,
        title: p.title ?? null,
        description: p.description ?? null,
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          description: a.description ?? null,
          required: a.required === true,
        })),
      });
    cursor = page.nextCursor;
  } while (cursor && prompts.length < MAX_ENTRIES);
  return prompts;
}

/** A prompt filled in: each message as text; images, audio and resources described in words. */
export async function getPrompt(
  client: Client,
  name: string,
  args: Record<string, string>,
  opts: Opts,
): Promise<McpPromptResult> {
  const r = await client.getPrompt({ name, arguments: args }, opts);
  return {
    description: r.description ?? null,
    messages: r.messages.map((m) => {
      const c = m.content;
      let text: string;
      if (c.type === 'text') text = c.text;
      else if (c.type === 'resource')
        text =
          'text' in c.resource && typeof c.resource.text === 'string'
            ? `[resource ${c.resource.uri}]\n${c.resource.text}`
            : `[resource ${c.resource.uri}: binary]`;
      else if (c.type === 'resource_link') text = `[resource ${c.name}: ${c.uri}]`;
      else text = `[${c.type} of type ${c.mimeType}]`;
      return { role: m.role, text };
    }),
  };
}

/**
 * One resource read: text parts as text, binary parts in base64, together at most READ_CAP_BYTES;
 * past it a text is cut and a blob left out, each marked `truncated`.
 */
export async function readResource(
  client: Client,
  uri: string,
  opts: Opts,
): Promise<McpResourceContent[]> {
  const r = await client.readResource({ uri }, opts);
  let room = READ_CAP_BYTES;
  return r.contents.map((c) => {
    const mime = c.mimeType ?? null;
    if ('text' in c && typeof c.text === 'string') {
      const size = Buffer.byteLength(c.text);
      const text = size <= room ? c.text : cutUtf8(c.text, room);
      room -= Buffer.byteLength(text);
      return { uri: c.uri, mime_type: mime, text, size, truncated: text.length < c.text.length };
    }
    const blob = 'blob' in c && typeof c.blob === 'string' ? c.blob : '';
    const size = Math.floor((blob.length * 3) / 4);
    const fits = blob.length <= room;
    if (fits) room -= blob.length;
    return { uri: c.uri, mime_type: mime, blob: fits ? blob : null, size, truncated: !fits };
  });
}

function cutUtf8(text: string, bytes: number): string {
  if (bytes <= 0) return '';
  const buf = Buffer.from(text).subarray(0, bytes).toString('utf8');
  // A character cut in half decodes as U+FFFD at the end: drop it.
  return buf.endsWith('\uFFFD') ? buf.slice(0, -1) : buf;
}

/** A server's refusal as the client should see it: a missing resource or prompt is not found, bad arguments are the caller's. */
export function callError(err: unknown, what: string, server: string): IpcCallError {
  const message = scrub((err as Error).message ?? String(err));
  if (err instanceof McpError) {
    if (err.code === RESOURCE_NOT_FOUND || /not found/i.test(message))
      return new IpcCallError('not_found', `The MCP server "${server}" says: ${message}.`);
    if (err.code === ErrorCode.InvalidParams)
      return new IpcCallError(
        'invalid_request',
        `The MCP server "${server}" refused ${what}: ${message}.`,
      );
    if (err.code === ErrorCode.MethodNotFound)
      return new IpcCallError('conflict', `The MCP server "${server}" does not offer ${what}.`);
    if (err.code === ErrorCode.RequestTimeout)
      return new IpcCallError(
        'timeout',
        `The MCP server "${server}" did not answer ${what} in time.`,
      );
  }
  return new IpcCallError(
    'unavailable',
    `${what} on the MCP server "${server}" failed: ${message}.`,
  );
}
