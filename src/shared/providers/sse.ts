import { ProviderError } from './errors.js';

/**
 * An incremental server-sent events parser (the WHATWG event-stream format): bytes go in as
 * they arrive, split anywhere (inside a line, a CRLF pair or a UTF-8 sequence), and whole events
 * come out. Lines end with CRLF, LF or CR; `:` lines are comments; several `data:` lines join with
 * "\n". One deliberate leniency: an event still open when the stream ends is delivered, because
 * some servers omit the final blank line; a truncated event then fails JSON parsing upstream.
 */

export interface SseEvent {
  /** The `event:` field, or "message" when there was none. */
  event: string;
  data: string;
  id?: string;
}

/** A line this long without an end is not an event stream; stop before memory runs out. */
const MAX_BUFFER = 16 * 1024 * 1024;

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  /** The previous chunk ended in CR: a LF starting the next one belongs to the same line end. */
  private pendingCR = false;
  private type = '';
  private data: string[] = [];
  private lastId: string | undefined;
  private started = false;

  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    this.feed(text, out);
    return out;
  }

  /** Call once at the end of the stream. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    this.feed(this.decoder.decode(), out);
    if (this.buffer.length > 0) this.line(this.buffer, out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  private feed(input: string, out: SseEvent[]): void {
    let text = input;
    if (text.length === 0) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCR) {
      this.pendingCR = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    const buf = this.buffer + text;
    let start = 0;
    for (;;) {
      let i = start;
      while (i < buf.length) {
        const c = buf.charCodeAt(i);
        if (c === 10 || c === 13) break;
        i++;
      }
      if (i >= buf.length) break;
      const line = buf.slice(start, i);
      if (buf.charCodeAt(i) === 13) {
        if (i + 1 < buf.length) start = buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
        else {
          this.pendingCR = true;
          start = i + 1;
        }
      } else start = i + 1;
      this.line(line, out);
    }
    this.buffer = buf.slice(start);
    if (this.buffer.length > MAX_BUFFER)
      throw new ProviderError(
        'protocol',
        'The provider sent an event-stream line longer than 16 MiB.',
      );
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        const ev: SseEvent = { event: this.type || 'message', data: this.data.join('\n') };
        if (this.lastId !== undefined) ev.id = this.lastId;
        out.push(ev);
      }
      this.type = '';
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // `retry` and unknown fields are ignored, as the format says.
  }
}

/** The events of a byte stream, in order. */
export async function* readSse(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const chunk of chunks) yield* parser.push(chunk);
  yield* parser.end();
}
