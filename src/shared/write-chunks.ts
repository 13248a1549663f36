import { close, openSync, write } from 'node:fs';
import { promisify } from 'node:util';

const writeAt = promisify(write);
const closeFd = promisify(close);

/**
 * Writes chunks to a new file and settles only once the file is closed, failure or not.
 * `pipeline(source, createWriteStream(path))` can reject while the stream is still opening its
 * file, which then appears after the caller removed it (a refused upload left a `.part`
 * behind). Here the file is opened before this function first yields, so removing it on failure
 * is final, and the source is read from the same tick the caller passed it: a stream that fails
 * before its first chunk (a zip entry that lies about its size) fails into this promise, not
 * into an 'error' event nobody listens to yet. Answers the number of bytes written.
 */
export async function writeChunks(
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  opts: { mode: number; flags?: 'wx' | 'w' },
): Promise<number> {
  const fd = openSync(path, opts.flags ?? 'wx', opts.mode); // a local open: microseconds
  let total = 0;
  try {
    for await (const chunk of chunks) {
      // A write to a regular file may still be short (a full disk answers later, with ENOSPC).
      for (let at = 0; at < chunk.length; ) {
        const { bytesWritten } = await writeAt(fd, chunk, at, chunk.length - at, null);
        at += bytesWritten;
      }
      total += chunk.length;
    }
  } finally {
    await closeFd(fd);
  }
  return total;
}
