import { deltaTypes } from './protocol/event-names.js';

/** Event types that carry a piece of streaming text: `{turn_id, delta}`. */
export const DELTA_TYPES: ReadonlySet<string> = new Set(deltaTypes);

type DeltaType = (typeof deltaTypes)[number];

/** Where the batcher sends: merged deltas on their own, every other event as it came. */
export interface BatchSink {
  delta(topic: string, type: DeltaType, turnId: string, delta: string): void;
  event(topic: string, type: string, data: unknown): void;
}

interface Window {
  type: DeltaType;
  turnId: string;
  /** What arrived since the last send ('' when nothing). */
  delta: string;
  timer: NodeJS.Timeout;
}

/**
 * Merges a turn's streaming deltas: the first on a quiet topic is sent at once and opens a window;
 * deltas within the window are merged into one send when it closes (which opens the next one).
 * Any other event on the topic first sends what is pending, so order never changes. The agent
 * worker's, and the only one on the way to a client: at most one frame per topic per window.
 */
export class DeltaBatcher {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly windowMs: number,
    private readonly sink: BatchSink,
  ) {}

  publish(topic: string, type: string, data: unknown): void {
    const d = DELTA_TYPES.has(type) ? deltaOf(data) : undefined;
    const open = this.windows.get(topic);
    if (d && open && open.type === type && open.turnId === d.turn_id) {
      open.delta += d.delta;
      return;
    }
    this.flush(topic);
    if (!d) return this.sink.event(topic, type, data);
    this.sink.delta(topic, type as DeltaType, d.turn_id, d.delta);
    this.open(topic, type as DeltaType, d.turn_id);
  }

  /** Sends what the topic's window holds, if anything, and closes it. */
  flush(topic: string): void {
    const w = this.windows.get(topic);
    if (!w) return;
    this.windows.delete(topic);
    clearTimeout(w.timer);
    if (w.delta !== '') this.sink.delta(topic, w.type, w.turnId, w.delta);
  }

  flushAll(): void {
    for (const topic of [...this.windows.keys()]) this.flush(topic);
  }

  private open(topic: string, type: DeltaType, turnId: string): void {
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
