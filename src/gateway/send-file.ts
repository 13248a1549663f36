import { open, type FileHandle } from 'node:fs/promises';
import { messageOf } from '../shared/errors.js';
import { log } from '../shared/log.js';
import type { Reply, Responder } from './http.js';

/** Files up to this size are read whole and sent in one go; bigger ones are streamed from disk. */
const STREAM_ABOVE = 8 * 1024 * 1024;

/**
 * Sends a file from disk (an upload, a backup archive): a small one as one body, a big one
 * streamed with its length. Answers the route's reply, or undefined once streaming has begun.
 */
export async function sendFile(
  responder: Responder,
  path: string,
  headers: Record<string, string>,
  head: boolean,
): Promise<Reply | undefined> {
  const fh = await open(path, 'r');
  let size: number;
  try {
    size = (await fh.stat()).size;
    if (size <= STREAM_ABOVE) {
      const bytes = await fh.readFile();
      await fh.close();
      return { body: bytes, headers };
    }
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
  streamFile(responder, fh, size, headers, head);
  return undefined;
}

/** Sends a big file from disk with its length, pausing the read while the socket is full. */
function streamFile(
  r: Responder,
  fh: FileHandle,
  size: number,
  headers: Record<string, string>,
  head: boolean,
): void {
  if (!r.begin(200, headers)) return void fh.close();
  const res = r.res;
  if (head) {
    res.cork(() => res.endWithoutBody(size, false));
    return void fh.close();
  }
  const stream = fh.createReadStream({ highWaterMark: 256 * 1024 }); // closes fh when done
  let finished = false;
  let sent = 0;
  const stop = () => {
    finished = true;
    stream.destroy();
  };
  r.onAbort(stop);
  stream.on('data', (data) => {
    const chunk = data as Buffer;
    if (finished || r.aborted) return stop();
    sent += chunk.length;
    if (sent > size) return cut('the file grew while it was sent');
    const ok = res.writeSized(chunk, size);
    if (sent === size) return stop();
    if (ok) return;
    stream.pause();
    res.onDrain(() => stream.resume());
  });
  // The file shrank or could not be read: the promised length cannot be met, so drop the connection.
  const cut = (why: string) => {
    if (finished || r.aborted) return;
    stop();
    log.warn('upload download cut short', { error: why });
    res.destroy();
  };
  stream.on('end', () => cut('the file ended early'));
  stream.on('error', (err) => cut(messageOf(err)));
}
