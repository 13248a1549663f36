import type { SendHandle } from 'node:child_process';
import type { Config } from '../shared/config/schema.js';
import { log } from '../shared/log.js';
import type { ProcessStatus, WsState } from '../shared/protocol/ipc.js';
import { Backoff } from './backoff.js';
import type { Child } from './child-process.js';
import type { ExitLog } from './exit-log.js';
import type { Forked } from './spawn-child.js';

export interface GatewayHost {
  /** Forks (or adopts an already forked) gateway with the supervisor's handlers attached. */
  spawn: (forked?: Forked) => Child;
  /** What a new gateway is started with, bar the /ws numbering; the port is the configured one. */
  startWith: () => {
    config: Config;
    access_key: string;
    listen: { host: string; port: number };
    started_at: number;
  };
  /** A new gateway serves: requests held for it may go. */
  serving: () => void;
  stopping: () => boolean;
  exits: ExitLog;
}

/**
 * The one gateway: started, handed the old one's socket and /ws numbering on a restart, and
 * started again at once after a crash (a gateway that cannot start backs off instead).
 */
export class GatewaySlot {
  child: Child | undefined;
  port: number | undefined;
  uws: 'native' | 'fallback' | null = null;
  engine: 'uws' | 'node' | null = null;
  /** While no gateway serves: why, and when the next start is tried (null while one is starting). */
  private down: { crashLoop: boolean; nextTryAt: number | null } | undefined;
  /** A gateway forked and not yet answering child.start (beside the serving one on a restart). */
  private starting: Child | undefined;
  private readonly backoff = new Backoff();
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly host: GatewayHost) {}

  get serves(): boolean {
    return this.child !== undefined;
  }

  async start(
    port: number,
    forked?: Forked,
    listener?: SendHandle,
    wsState?: WsState,
  ): Promise<{ port: number; engine: 'uws' | 'node' }> {
    const child = this.host.spawn(forked);
    this.starting = child;
    try {
      return await this.startChild(child, port, listener, wsState);
    } finally {
      if (this.starting === child) this.starting = undefined;
    }
  }

  private async startChild(
    child: Child,
    port: number,
    listener?: SendHandle,
    wsState?: WsState,
  ): Promise<{ port: number; engine: 'uws' | 'node' }> {
    if (listener)
      child.sendRaw({ kind: 'event', type: 'gateway.listener', payload: {} }, listener, () =>
        (listener as { close?: () => void }).close?.(),
      );
    const start = this.host.startWith();
    let started;
    try {
      started = await child.endpoint.request(
        'child.start',
        {
          ...start,
          listen: { host: start.listen.host, port },
          ...(wsState ? { ws_state: wsState } : {}),
        },
        { to: 'gateway' },
      );
    } catch (err) {
      child.expectedExit = true;
      await child.stop(1000);
      throw err;
    }
    const previous = this.child;
    this.child = child;
    this.host.serving();
    this.down = undefined;
    child.state = 'running';
    if (previous && previous !== child && previous.alive) previous.state = 'draining';
    this.port = started.port ?? port;
    this.uws = started.uws ?? null;
    this.engine = started.engine ?? 'uws';
    return { port: this.port, engine: this.engine };
  }

  /** After a child exited: whether it was the serving gateway (then it is started again). */
  exited(child: Child, how: string): boolean {
    if (this.child !== child) return false;
    this.child = undefined;
    this.respawn(how, true);
    return true;
  }

  /**
   * Starts a gateway again. One that had served comes back at once, so no request that crashes
   * it can buy a minute of downtime; only a gateway that cannot start backs off into a crash-loop
   * pause.
   */
  private respawn(how: string, served: boolean): void {
    const { delayMs, crashLoop } = served ? { delayMs: 0, crashLoop: false } : this.backoff.next();
    // One started again at once is starting from now on, not backing off.
    this.down = { crashLoop, nextTryAt: delayMs === 0 ? null : Date.now() + delayMs };
    if (crashLoop)
      log.error('the gateway cannot start; pausing before the next try', {
        failures_in_last_minute: this.backoff.recent,
        retry_in_s: delayMs / 1000,
        last: how,
      });
    else
      log.warn(
        served
          ? 'the gateway exited unexpectedly; restarting it'
          : 'the gateway did not start; trying again',
        { how, in_ms: delayMs },
      );
    this.pending = setTimeout(() => {
      this.pending = undefined;
      if (this.host.stopping()) return;
      this.down = { crashLoop, nextTryAt: null };
      this.host.exits.restarted('gateway');
      this.start(this.port ?? this.host.startWith().listen.port).catch((err: Error) => {
        const why = `did not start: ${err.message}`;
        log.error('the gateway did not come back', { error: err.message });
        this.host.exits.exited('gateway', why);
        if (!this.host.stopping() && this.child === undefined) this.respawn(why, false);
      });
    }, delayMs);
  }

  /**
   * The gateway row `svc status` shows besides the serving gateway's own: a new one starting (from
   * its fork to its answer to child.start, with its pid), or, while none serves, the missing one
   * (starting, backing off or pausing, and why). So the role is listed the whole time.
   */
  pendingStatus(): ProcessStatus | undefined {
    if (this.starting)
      return {
        ...this.baseStatus(),
        pid: this.starting.pid,
        state: 'starting',
        uptime_s: Math.round((Date.now() - this.starting.startedAt) / 1000),
        next_try_at: null,
      };
    const down = this.child === undefined ? this.down : undefined;
    if (!down) return undefined;
    return {
      ...this.baseStatus(),
      state: down.nextTryAt === null ? 'starting' : down.crashLoop ? 'crash_loop' : 'backoff',
      next_try_at: down.nextTryAt === null ? null : new Date(down.nextTryAt).toISOString(),
    };
  }

  private baseStatus(): ProcessStatus {
    return {
      role: 'gateway',
      pid: -1,
      state: 'starting',
      uptime_s: 0,
      restarts: this.host.exits.restarts('gateway') ?? 0,
      rss_bytes: null,
      inflight_turns: 0,
      last_exit: this.host.exits.lastExit('gateway') ?? null,
    };
  }

  stop(): void {
    clearTimeout(this.pending);
  }
}
