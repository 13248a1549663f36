import type { Socket } from 'node:net';
import type { IpcMessage } from './ipc.js';
import type { Link } from './endpoint.js';

/** A line longer than this ends the link: no peer of ours sends one (results are capped well below). */
const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * An IPC link over a stream socket (a direct channel between two workers that the supervisor
 * brokered): one JSON value per line. What arrives before a listener is attached is kept, so a
 * handshake can be read first with `first()`. The Endpoint on top validates every message.
 */
export class SocketLink implements Link {
  private buffer = '';
  private readonly queue: unknown[] = [];
  private listener: ((raw: unknown) => void) | undefined;

  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.data(chunk));
    socket.on('error', () => socket.destroy()); // 'close' follows; whoever holds the link reacts there
  }

  send(message: IpcMessage | Record<string, unknown>): void {
    if (!this.socket.destroyed) this.socket.write(`${JSON.stringify(message)}\n`);
  }

  onMessage(listener: (raw: unknown) => void): void {
    this.listener = listener;
    for (const m of this.queue.splice(0)) listener(m);
  }

  /** The next message (the handshake), or a rejection if the socket closes or stays silent. */
  first(timeoutMs: number): Promise<unknown> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.socket.off('close', closed);
        this.listener = undefined;
      };
      const closed = () => {
        done();
        reject(new Error('the channel closed before its handshake'));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error('no handshake in time'));
      }, timeoutMs);
      this.socket.once('close', closed);
      this.listener = (m) => {
        done();
        resolve(m);
      };
    });
  }

  private data(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        this.socket.destroy(); // not our protocol: nothing after this can be trusted
        return;
      }
      if (this.listener) this.listener(value);
      else this.queue.push(value);
    }
    if (this.buffer.length > MAX_LINE_CHARS) this.socket.destroy();
  }
}
