import type { StreamName } from './shell-process.js';

const INTERVAL_MS = 100;
/** One event carries at most this much of a stream; a flood keeps its latest part. */
const EVENT_CAP = 16 * 1024;

/**
 * Streams a running command's output as `terminal.output` events, merging chunks so that a
 * chatty command sends at most one event per stream every 100 ms (about 20 a second).
 */
export class LiveOutput {
  private pending: Record<StreamName, string> = { stdout: '', stderr: '' };
  private skipped: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly emit: (type: string, data: Record<string, unknown>) => void) {}

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
        this.emit('terminal.output', skipped > 0 ? { stream, chunk, skipped } : { stream, chunk });
      } catch {
        // Live output is a courtesy; the result still carries the output.
      }
    }
  }
}
