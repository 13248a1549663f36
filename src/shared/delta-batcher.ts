import { deltaTypes } from './protocol/event-names.js';

/** Event types that carry a piece of streaming text: `{turn_id, delta}`. */
export const DELTA_TYPES: ReadonlySet<string> = new Set(deltaTypes);

interface Window {
  type: string;
  turnId: string;
  /** What arrived since the last send ('' when nothing). */
  delta: string;
  timer: NodeJS.Timeout;
}

/**
 * Merges a turn's streaming deltas: the first on a quiet topic is sent at once and opens a window;
 * deltas within the window are merged into one send when it closes (which opens the next one).
 * Any other event on the topic first sends what is pending, so order never changes. Used by the
 * agent worker (fewer IPC messages) and the gateway (at most one frame per topic per window).
 */
export class DeltaBatcher {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly windowMs: number,
    private readonly send: (topic: string, type: string, data: unknown) => void,
  ) {}

  publish(topic: string, type: string, data: unknown): void {
    const d = DELTA_TYPES.has(type) ? deltaOf(data) : undefined;
    const open = this.windows.get(topic);
    if (d && open && open.type === type && open.turnId === d.turn_id) {
      open.delta += d.delta;
      return;
    }
    this.flush(topic);
    this.send(topic, type, d ? { turn_id: d.turn_id, delta: d.delta } : data);
    if (d) this.open(topic, type, d.turn_id);
  }

  /** Sends what the topic's window holds, if anything, and closes it. */
  flush(topic: string): void {
    const w = this.windows.get(topic);
    if (!w) return;
    this.windows.delete(topic);
    clearTimeout(w.timer);
    if (w.delta !== '') this.send(topic, w.type, { turn_id: w.turnId, delta: w.delta });
  }

  flushAll(): void {
    for (const topic of [...this.windows.keys()]) this.flush(topic);
  }

  private open(topic: string, type: string, turnId: string): void {
    const timer = setTimeout(() => {
      const w = this.windows.get(topic);
      if (w?.timer !== timer) return;
      if (w.delta === '') return void this.windows.delete(topic); // a quiet window ends the batching
      this.flush(topic);
      this.open(topic, type, turnId);
    }, this.windowMs);
    this.windows.set(topic, { type, turnId, delta: '', timer });
  }
}

function deltaOf(data: unknown): { turn_id: string; delta: string } | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Record<string, unknown>;
  return typeof d.turn_id === 'string' && typeof d.delta === 'string'
    ? { turn_id: d.turn_id, delta: d.delta }
    : undefined;
}
