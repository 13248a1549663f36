import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Attachment } from '../../../../shared/protocol/message-content.js';
import type { McpContent } from '../../../../shared/protocol/mcp.js';
import { insertUpload } from '../../../../shared/store/uploads.js';
import { isoNow, newId } from '../../../../shared/store/util.js';
import { OutputLog, outputFile } from '../shell/output-log.js';
import type { ToolContext, ToolResult } from '../registry.js';

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
const IMAGE_MAX = 5 * 1024 * 1024;

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
export function toResult(content: McpContent[], isError: boolean, ctx: ToolContext): ToolResult {
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
