import type { Child } from './child-process.js';

export interface LivenessHost {
  /** The children to watch (those not yet ready, or on their way out, are skipped). */
  children: () => Array<Child | undefined>;
  /** Read each tick, so a config change applies at once. */
  bounds: () => { pingMs: number; timeoutMs: number };
  /** The child answered nothing for the bound: kill and replace it. */
  unresponsive: (child: Child, silentMs: number) => void;
}

interface Watch {
  /** When it last answered a ping (or was first seen). */
  lastAnswer: number;
  /** Ticks in a row that found a ping still unanswered. */
  misses: number;
  outstanding: boolean;
}

/** Ticks in a row with a ping outstanding before a child can be called hung, whatever the bound. */
const MIN_MISSES = 3;

/**
 * Liveness: the supervisor pings every running child over IPC each `pingMs`. A child that answers
 * none for `timeoutMs` (and misses at least three pings in a row) is handed to `unresponsive`; one
 * silent for half that shows as `unresponsive` in status meanwhile. When the supervisor's own timer
 * fires late (the machine is starved of CPU), the time lost is credited to every child: a
 * healthy child on a loaded machine is never blamed for the supervisor's slowness.
 */
export class Liveness {
  private readonly watches = new WeakMap<Child, Watch>();
  private timer: NodeJS.Timeout | undefined;
  private lastTick = Date.now();

  constructor(private readonly host: LivenessHost) {}

  start(): void {
    this.lastTick = Date.now();
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.tick();
      if (this.timer) this.schedule();
    }, this.host.bounds().pingMs);
    this.timer.unref();
  }

  private tick(): void {
    const now = Date.now();
    const { pingMs, timeoutMs } = this.host.bounds();
    const late = Math.max(0, now - this.lastTick - pingMs);
    this.lastTick = now;
    // Late by more than a ping: the supervisor itself was starved, so every answer may be waiting in its queue.
    const starved = late > pingMs;
    for (const child of this.host.children()) {
      if (
        !child ||
        !child.ready ||
        !child.alive ||
        child.expectedExit ||
        (child.state !== 'running' && child.state !== 'unresponsive')
      )
        continue;
      let w = this.watches.get(child);
      if (!w) {
        w = { lastAnswer: now, misses: 0, outstanding: false };
        this.watches.set(child, w);
      }
      if (starved) w.lastAnswer = Math.min(now, w.lastAnswer + late);
      if (w.outstanding) w.misses++;
      else this.ping(child, w, timeoutMs);
      const silent = now - w.lastAnswer;
      if (silent >= timeoutMs && w.misses >= MIN_MISSES) {
        this.host.unresponsive(child, silent);
        continue;
      }
      if (silent >= timeoutMs / 2 && w.misses >= 2) child.state = 'unresponsive';
    }
  }

  private ping(child: Child, w: Watch, timeoutMs: number): void {
    w.outstanding = true;
    child.endpoint
      .request('child.ping', {}, { to: child.role, timeoutMs: timeoutMs * 2 })
      .then(() => {
        w.lastAnswer = Date.now();
        w.misses = 0;
        if (child.state === 'unresponsive') child.state = 'running';
      })
      .catch(() => undefined)
      .finally(() => {
        w.outstanding = false;
      });
  }
}
