import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../../../../shared/config/schema.js';
import type { McpChannel } from './mcp-channel.js';
import type { Attachment } from '../../../../shared/protocol/message-content.js';
import type { McpContent } from '../../../../shared/protocol/mcp.js';
import { insertUpload } from '../../../../shared/store/uploads.js';
import { isoNow, newId } from '../../../../shared/store/util.js';
import { OutputLog, outputFile } from '../shell/output-log.js';
import type { Tool, ToolContext, ToolResult } from '../registry.js';

/** The tool name other MCP clients use too, so permission rules written for them carry over. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
const IMAGE_MAX = 5 * 1024 * 1024;
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
  return listed.servers.flatMap((s) => {
    const timeoutMs = (config.mcp.servers[s.name]?.timeout_seconds ?? 60) * 1000;
    return s.tools
      .filter((t) => /^[A-Za-z0-9_-]{1,128}$/.test(mcpToolName(s.name, t.name))) // providers refuse other tool names
      .map((t): Tool => mcpTool(channel, s.name, t.name, t.description, t.input_schema, timeoutMs));
  });
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

/** An interrupt ends the wait at once; the worker tells the server to cancel meanwhile. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Text capped like terminal output (the rest spilled to a file); images saved as uploads the model may see. */
function toResult(content: McpContent[], isError: boolean, ctx: ToolContext): ToolResult {
  const log = new OutputLog(() =>
    outputFile(ctx.paths.home, ctx.sessionId, `mcp-${ctx.turnId}-${ctx.callId}`),
  );
  const images: Attachment[] = [];
  for (const c of content) {
    if (c.type === 'text') {
      log.append(log.total > 0 ? `\n${c.text}` : c.text);
      continue;
    }
    const bytes = Buffer.from(c.data, 'base64');
    if (bytes.length > IMAGE_MAX) {
      log.append(`\n[an image (${c.mime}, ${bytes.length} bytes) too large to pass on]`);
      continue;
    }
    const saved = saveImage(ctx, c.mime, bytes);
    images.push(saved);
    log.append(
      `${log.total > 0 ? '\n' : ''}[image ${saved.name} (${c.mime}, ${bytes.length} bytes) at ${saved.path}]`,
    );
  }
  return {
    output: log.summary() || (isError ? 'The tool failed without saying why.' : '(no output)'),
    ...(isError ? { isError: true } : {}),
    ...(images.length ? { images } : {}),
  };
}

export function saveImage(ctx: ToolContext, mime: string, bytes: Buffer): Attachment {
  mkdirSync(ctx.paths.uploadsDir, { recursive: true, mode: 0o700 });
  const name = `${newId('mcp')}.${EXT[mime] ?? 'bin'}`;
  const path = join(ctx.paths.uploadsDir, name);
  writeFileSync(path, bytes, { mode: 0o600 });
  insertUpload(ctx.db, {
    name,
    original_name: name,
    mime,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    created_at: isoNow(),
  });
  return { name, mime, size: bytes.length, path };
}
