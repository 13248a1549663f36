import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * A pass-through that hashes and counts what goes through it. A transform, not a 'data'
 * listener: a listener would start the flow before the consumer (the zip writer, which reaches
 * each entry in turn) is attached, and the bytes would be lost to it.
 */
class Hashing extends Transform {
  private readonly hash = createHash('sha256');
  size = 0;

  constructor(private readonly onBytes?: (n: number) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    this.onBytes?.(chunk.length);
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

export const hashing = (onBytes?: (n: number) => void) => new Hashing(onBytes);
