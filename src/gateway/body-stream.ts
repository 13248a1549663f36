import type { EngineResponse } from './engine/types.js';

const HIGH_WATER = 4; // chunks queued before the socket is paused

/**
 * A request body as an async iterable of Buffers, for routes that stream to disk (uploads).
 * Engines may hand out chunks that die with the callback (uWS), so each is copied; when the consumer falls
 * behind, the socket is paused instead of buffering the whole body in memory.
 */
export class BodyStream implements AsyncIterable<Buffer> {
  private readonly queue: Buffer[] = [];
  private ended = false;
  private failed: Error | undefined;
  private wake: (() => void) | undefined;
  private paused = false;
  received = 0;

  constructor(private readonly res: EngineResponse) {
    res.onData((chunk, isLast) => {
      this.received += chunk.byteLength;
      if (chunk.byteLength > 0) this.queue.push(Buffer.from(chunk));
      if (isLast) this.ended = true;
      if (this.queue.length >= HIGH_WATER && !this.ended && !this.paused) {
        this.paused = true;
        res.pause();
      }
      this.notify();
    });
  }

  /** The client went away: the consumer's next read throws. */
  abort(): void {
    this.failed = new Error('the client closed the connection');
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      if (this.failed) throw this.failed;
      const next = this.queue.shift();
      if (next) {
        if (this.paused && this.queue.length < HIGH_WATER / 2) {
          this.paused = false;
          this.res.resume();
        }
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => (this.wake = r));
    }
  }
}
