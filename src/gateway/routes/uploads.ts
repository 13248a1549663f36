import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../../shared/errors.js';
import { servedType } from '../../shared/mime.js';
import {
  detectMime,
  formatBytes,
  placeUpload,
  sanitizeFileName,
  tempPath,
  writeTemp,
} from '../../shared/upload-files.js';
import { isoNow } from '../../shared/store/util.js';
import { insertUpload, resolveUpload, type Upload } from '../../shared/store/uploads.js';
import type { Deps } from '../deps.js';
import type { BodyStream } from '../body-stream.js';
import { DRAIN_BYTES, DRAIN_MS } from '../http.js';
import { multipartBoundary, parseMultipart, type Part } from '../multipart.js';
import { uploadedFiles } from '../../shared/protocol/answers/uploads.js';
import { binaryPart, requestBodyDoc } from '../request-doc.js';
import { route, type Route } from '../route.js';
import { sendFile } from '../send-file.js';

const MAX_FILES = 100;
/** Temp files older than this are leftovers of a crashed gateway (never of a live upload). */
const STALE_TMP_MS = 24 * 3600_000;

export function uploadRoutes(deps: Deps): Route[] {
  const tmpDir = join(deps.paths.uploadsDir, '.tmp');
  void sweepStaleTemp(tmpDir);
  return [
    route({
      method: 'POST',
      path: '/api/upload',
      summary:
        'Uploads files: a multipart/form-data body with one or more parts named "file" (other fields are ignored), streamed to disk. Answers 201 {files: [{name, original_name, size, mime, sha256, url}]}; 413 over limits.upload_bytes, 415 for another Content-Type.',
      stream: true,
      requestBody: () =>
        requestBodyDoc(
          {
            'multipart/form-data': {
              type: 'object',
              properties: {
                file: {
                  type: 'array',
                  items: binaryPart("A file; its part's filename is kept as original_name."),
                  minItems: 1,
                  maxItems: 100,
                  description:
                    'One or more parts named "file" (at most 100); other parts are ignored.',
                },
              },
              required: ['file'],
            },
          },
          true,
        ),
      status: 201,
      response: uploadedFiles,
      errors: [413, 415],
      handler: async ({ req, body, responder }) => {
        const limit = deps.config().limits.upload_bytes;
        // Every early answer closes the connection: the unread body must not be parsed as a request.
        const refuse = (err: ApiError) => ({
          status: err.status,
          body: err.toBody(),
          headers: err.headers,
          close: true,
        });
        const type = multipartBoundary(req.headers['content-type']);
        if (Number(req.headers['content-length'] ?? 0) > limit)
          return refuse(uploadTooLarge(limit));
        if (type === undefined) {
          const got = (req.headers['content-type'] ?? '').split(';')[0]?.trim() || 'none';
          await drain(body);
          return refuse(
            new ApiError(
              'unsupported_media_type',
              `Send files as "Content-Type: multipart/form-data; boundary=..." with parts named "file" (got ${JSON.stringify(got)}).`,
            ),
          );
        }
        if ('error' in type) {
          await drain(body);
          return refuse(
            new ApiError('invalid_request', `The multipart body is malformed: ${type.error}.`),
          );
        }
        if (!body)
          return refuse(
            new ApiError(
              'invalid_request',
              'The upload has no body: send at least one part named "file".',
            ),
          );
        try {
          const files = await receive(deps, parseMultipart(capped(body, limit), type.boundary));
          // Whatever follows the final boundary (an epilogue) is dropped; a body that goes on and on costs its connection.
          return { status: 201, body: { files }, close: !(await drain(body)) };
        } catch (err) {
          if (responder.aborted) return undefined; // the client left; receive() removed what it wrote
          await drain(body);
          if (err instanceof ApiError) return refuse(err);
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
            return refuse(
              new ApiError(
                'unavailable',
                'The disk of the server is full; free some space and upload again.',
              ),
            );
          throw err;
        }
      },
    }),
    route({
      method: 'GET',
      path: '/api/uploads/:name',
      summary:
        'Downloads an uploaded file, always as an attachment with X-Content-Type-Options: nosniff; only images, PDF and plain text keep their type.',
      response: null,
      produces: 'application/octet-stream',
      handler: async ({ params, req, responder }) => {
        const name = params.name ?? '';
        const file = resolveUpload(deps.db, deps.paths, name);
        if (!file)
          throw new ApiError(
            'not_found',
            `There is no upload named ${JSON.stringify(name)}; POST /api/upload answers the names of the files it stored.`,
          );
        const headers = {
          'Content-Type': servedType(file.mime), // an allowlist: never HTML or SVG from our origin
          'X-Content-Type-Options': 'nosniff',
          'Content-Disposition': contentDisposition(file.original_name),
          'Content-Security-Policy': 'sandbox',
          'Cache-Control': 'private, no-cache',
        };
        return sendFile(responder, file.path, headers, req.method === 'HEAD');
      },
    }),
  ];
}

interface Received {
  tmp: string;
  final?: string;
  original: string;
  mime: string;
  size: number;
  sha256: string;
}

/**
 * Writes each "file" part to its own temp file, then, once the whole body has arrived, gives
 * each its final name and records them all. Any failure (limit, bad body, client gone) removes
 * every file of the request, so an upload is all or nothing.
 */
async function receive(deps: Deps, parts: AsyncIterable<Part>) {
  const files: Received[] = [];
  try {
    for await (const part of parts) {
      if (part.name !== 'file') continue; // the parser skips the unread body
      if (files.length >= MAX_FILES)
        throw new ApiError(
          'invalid_request',
          `An upload holds at most ${MAX_FILES} files; send the rest in another request.`,
        );
      const original = sanitizeFileName(part.filename);
      const f: Received = {
        tmp: await tempPath(deps.paths.uploadsDir),
        original,
        mime: '',
        size: 0,
        sha256: '',
      };
      files.push(f);
      const w = await writeTemp(part.body, f.tmp);
      f.size = w.size;
      f.sha256 = w.sha256;
      f.mime = detectMime(part.contentType, original, w.head);
    }
    if (files.length === 0)
      throw new ApiError(
        'invalid_request',
        'The upload has no file: send at least one part named "file" (Content-Disposition: form-data; name="file"; filename="...").',
      );
    const now = isoNow();
    for (const f of files) f.final = await placeUpload(deps.paths.uploadsDir, f.tmp, f.original);
    const rows: Upload[] = files.map((f) => ({
      name: f.final!,
      original_name: f.original,
      mime: f.mime,
      size: f.size,
      sha256: f.sha256,
      created_at: now,
    }));
    deps.db.transaction(() => {
      for (const r of rows) insertUpload(deps.db, r);
    })();
    for (const f of files) await unlink(f.tmp).catch(() => {});
    return rows.map((r) => ({
      name: r.name,
      original_name: r.original_name,
      size: r.size,
      mime: r.mime,
      sha256: r.sha256,
      url: `/api/uploads/${encodeURIComponent(r.name)}`,
    }));
  } catch (err) {
    for (const f of files) {
      await unlink(f.tmp).catch(() => {});
      if (f.final) await unlink(join(deps.paths.uploadsDir, f.final)).catch(() => {});
    }
    throw err;
  }
}

/** Reads and drops the rest of a refused body within DRAIN_BYTES / DRAIN_MS (see http.ts); true when it was read to its end. */
async function drain(body: BodyStream | undefined): Promise<boolean> {
  if (!body) return true;
  let timer: NodeJS.Timeout | undefined;
  const read = (async () => {
    let n = 0;
    try {
      for await (const chunk of body) if ((n += chunk.length) > DRAIN_BYTES) return false;
      return true;
    } catch {
      return false; // the client left
    }
  })();
  const ended = await Promise.race([
    read,
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), DRAIN_MS))),
  ]);
  clearTimeout(timer);
  return ended;
}

/** Counts the request's bytes as they arrive and stops at the limit. */
async function* capped(body: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > limit) throw uploadTooLarge(limit);
    yield chunk;
  }
}

function uploadTooLarge(limit: number): ApiError {
  return new ApiError(
    'too_large',
    `The upload is larger than the limit of ${limit} bytes (${formatBytes(limit)}, limits.upload_bytes in config.yml).`,
  );
}

/** `attachment` with an ASCII fallback name and the exact one in RFC 5987 form. */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/** Removes temp files a crashed gateway left behind; a live upload's temp file is never that old. */
async function sweepStaleTemp(tmpDir: string): Promise<void> {
  try {
    for (const entry of await readdir(tmpDir)) {
      const p = join(tmpDir, entry);
      const st = await stat(p).catch(() => undefined);
      if (st?.isFile() && Date.now() - st.mtimeMs > STALE_TMP_MS) await unlink(p).catch(() => {});
    }
  } catch {
    // no .tmp folder yet
  }
}
