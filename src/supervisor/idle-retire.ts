import { log } from '../shared/log.js';
import type { Child } from './child-process.js';

/** How the idle watcher sees the agent pool; the supervisor owns the pool itself. */
export interface IdlePool {
  /** The agent workers that take work now. */
  members: () => readonly Child[];
  /** Whether the worker has a turn or a request under way. */
  busy: (c: Child) => boolean;
  /** Seconds a worker may sit idle before it retires; 0 keeps workers for good. */
  idleSeconds: () => number;
  /** Takes the worker out of the pool (no new work reaches it) or puts it back. */
  withdraw: (c: Child) => void;
  restore: (c: Child) => void;
  stopGraceMs: number;
}

/**
 * Retires agent workers that have had nothing to do for `agent.idle_retire_seconds`, so an idle
 * svc returns to its two processes (supervisor and gateway); the next turn starts a worker again.
 * The worker has the last word: one with a background command still running keeps its place.
 */
export class IdleRetirer {
  private readonly idleSince = new Map<Child, number>();
  private timer: NodeJS.Timeout | undefined;
  private retiring = false;

  constructor(private readonly pool: IdlePool) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    const bound = this.pool.idleSeconds() * 1000;
    const now = Date.now();
    const members = this.pool.members();
    for (const c of [...this.idleSince.keys()]) if (!members.includes(c)) this.idleSince.delete(c);
    if (bound <= 0 || this.retiring) return;
    for (const c of members) {
      if (!c.alive || this.pool.busy(c)) {
        this.idleSince.delete(c);
        continue;
      }
      const since = this.idleSince.get(c);
      if (since === undefined) this.idleSince.set(c, now);
      else if (now - since >= bound) {
        this.retiring = true;
        await this.retire(c).finally(() => (this.retiring = false));
        return; // one a tick: the pool has changed
      }
    }
  }

  private async retire(c: Child): Promise<void> {
    this.idleSince.delete(c);
    this.pool.withdraw(c);
    const answer = await c.endpoint.request('agent.retire', {}).catch(() => undefined);
    if (!answer?.retired) {
      // Busy after all (a background command), or no answer: it keeps its place and its clock restarts.
      this.pool.restore(c);
      log.info('agent worker kept although idle', {
        pid: c.pid,
        why: answer?.why ?? 'it did not answer',
      });
      return;
    }
    log.info('agent worker retired after being idle', {
      pid: c.pid,
      idle_seconds: this.pool.idleSeconds(),
    });
    await c.stop(this.pool.stopGraceMs);
  }
}
