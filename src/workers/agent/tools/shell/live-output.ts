import { previewText } from '../../../../shared/protocol/event-cap.js';
import type { CallEmit } from '../../../../shared/ws-publish.js';
import type { StreamName } from './shell-process.js';

const INTERVAL_MS = 100;
/** A flush sends at most this much of a stream; a flood keeps its latest part. */
const EVENT_CAP = 16 * 1024;
/** …in events of at most this many bytes of text each (a `/ws` event is at most 4 KB). */
const PIECE_BYTES = 3000;

/**
 * Streams a running command's output as `terminal.output` events, merging chunks so that a
 * chatty command sends at most one event per stream every 100 ms (about 20 a second).
 */
export class LiveOutput {
  private pending: Record<StreamName, string> = { stdout: '', stderr: '' };
  private skipped: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly emit: CallEmit) {}

  push = (stream: StreamName, chunk: string): void => {
    let text = this.pending[stream] + chunk;
    if (text.length > EVENT_CAP) {
      this.skipped[stream] += text.length - EVENT_CAP;
      text = text.slice(-EVENT_CAP);
    }
    this.pending[stream] = text;
    this.timer ??= setTimeout(() => this.flush(), INTERVAL_MS);
  };

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      const chunk = this.pending[stream];
      if (chunk.length === 0) continue;
      const skipped = this.skipped[stream];
      this.pending[stream] = '';
      this.skipped[stream] = 0;
      try {
        for (let rest = chunk, first = true; rest.length > 0; first = false) {
          const piece = previewText(rest, PIECE_BYTES);
          // The cut's ellipsis is not part of the output: the piece is the text before it.
          const text = piece.truncated ? piece.text.slice(0, -1) : piece.text;
          rest = rest.slice(text.length);
          this.emit(
            'terminal.output',
            first && skipped > 0 ? { stream, chunk: text, skipped } : { stream, chunk: text },
          );
        }
      } catch {
        // Live output is a courtesy; the result still carries the output.
      }
    }
  }
}
