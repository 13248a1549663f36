import { CHILD_START_MS, type Child } from './child-process.js';
import type { Config } from '../shared/config/schema.js';
import { log } from '../shared/log.js';
import type { ProcessStatus } from '../shared/protocol/ipc.js';
import { Backoff } from './backoff.js';
import type { ExitLog } from './exit-log.js';
import { roleSpecs, serviceRoles, type ChildRoleName, type StoreFacts } from './roles.js';

export interface ServiceHost {
  /** Forks a child of the role with the supervisor's handlers attached. */
  spawn: (role: ChildRoleName) => Child;
  config: () => Config;
  store: StoreFacts;
  /** False while svc stops: nothing is started then. */
  running: () => boolean;
  /** Where restarts and last exits are counted for `svc status` (shared with every other role). */
  exits: ExitLog;
}

/**
 * The roles that run as one process while the config wants them (mcp; later channels and cron),
 * driven by the role table alone: started when wanted, stopped when no longer wanted, restarted
 * with backoff after a crash. Process groups a child declares (its stdio MCP servers) are killed
 * when the child dies, so even a kill -9 of the child leaves no orphan.
 */
export class Services {
  private readonly children = new Map<ChildRoleName, Child>();
  private readonly backoff = new Map<ChildRoleName, Backoff>();
  private readonly pending = new Map<ChildRoleName, NodeJS.Timeout>();
  private readonly groups = new Map<Child, number[]>();

  constructor(private readonly host: ServiceHost) {}

  get(role: ChildRoleName): Child | undefined {
    const c = this.children.get(role);
    return c?.alive ? c : undefined;
  }

  all(): Child[] {
    return [...this.children.values()];
  }

  owns(child: Child): boolean {
    return this.children.get(child.role) === child;
  }

  /** Starts what the config wants and stops what it no longer wants. */
  sync(): void {
    if (!this.host.running()) return;
    const config = this.host.config();
    for (const role of serviceRoles) {
      const wanted = roleSpecs[role].wanted(config, this.host.store);
      const child = this.children.get(role);
      if (wanted && !child && !this.pending.has(role)) this.start(role);
      if (!wanted) {
        clearTimeout(this.pending.get(role));
        this.pending.delete(role);
        if (!child) continue;
        // Not while it starts for, or answers, a request (a manual cron run about to be recorded): look again soon.
        if (child.endpoint.inflight > 0 || (this.demand.get(role) ?? 0) > 0) {
          this.resyncSoon();
          continue;
        }
        this.children.delete(role);
        log.info(`${role} worker no longer needed; stopping it`);
        void child.stop(5000);
      }
    }
  }

  private resync: NodeJS.Timeout | undefined;
  private resyncSoon(): void {
    if (this.resync) return;
    this.resync = setTimeout(() => {
      this.resync = undefined;
      this.sync();
    }, 1000);
    this.resync.unref();
  }

  /**
   * A child of the role that has started, starting one when none runs (a request for it arrived:
   * a manual cron run while no task is enabled). It stays until `sync` finds it unwanted.
   */
  async ensure(role: ChildRoleName): Promise<Child | undefined> {
    this.demand.set(role, (this.demand.get(role) ?? 0) + 1);
    try {
      return await this.ensureOnce(role);
    } finally {
      this.demand.set(role, (this.demand.get(role) ?? 1) - 1);
    }
  }

  /** Callers waiting in `ensure`, by role: `sync` leaves their child alone. */
  private readonly demand = new Map<ChildRoleName, number>();

  private async ensureOnce(role: ChildRoleName): Promise<Child | undefined> {
    // Twice: a child that was being stopped (no longer wanted) as the request came gets a successor.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!this.host.running()) return undefined;
      let child = this.get(role);
      if (!child || child.state === 'stopping') {
        clearTimeout(this.pending.get(role));
        this.pending.delete(role);
        child = this.start(role);
      }
      await this.started.get(child);
      if (child.alive && child.state !== 'stopping') return child;
      log.warn(`the ${role} worker was gone before it could take a request`, {
        pid: child.pid,
        attempt: attempt + 1,
      });
    }
    return undefined;
  }

  private readonly started = new WeakMap<Child, Promise<unknown>>();

  private start(role: ChildRoleName): Child {
    const child = this.host.spawn(role);
    this.children.set(role, child);
    child.endpoint.onEvent((e) => {
      if (e.type === 'child.groups') this.groups.set(child, e.payload.pgids);
    });
    void child.exited.then(() => this.killGroups(child));
    const started = child.endpoint
      .request(
        'child.start',
        { config: this.host.config() },
        { to: role, timeoutMs: CHILD_START_MS },
      )
      .then(() => {
        if (child.alive) child.state = 'running';
      })
      .catch((err: Error) => {
        log.warn(`the ${role} worker did not start`, { error: err.message });
        // Never left serving without its config: killed, it is restarted like a crash (backoff).
        child.killUnresponsive();
      });
    this.started.set(child, started);
    return child;
  }

  /** Called for every child exit; answers whether the child was one of ours. */
  exited(child: Child, how: string): boolean {
    if (!serviceRoles.includes(child.role)) return false;
    if (this.children.get(child.role) !== child) return true; // one we stopped on purpose
    this.children.delete(child.role);
    if (child.expectedExit || !this.host.running()) return true;
    const role = child.role;
    this.host.exits.exited(role, how);
    const backoff = this.backoff.get(role) ?? new Backoff();
    this.backoff.set(role, backoff);
    const { delayMs, crashLoop } = backoff.next();
    if (crashLoop)
      log.error(`the ${role} worker is crash-looping; pausing before the next try`, {
        retry_in_s: delayMs / 1000,
        last: how,
      });
    else
      log.warn(`the ${role} worker exited unexpectedly; restarting it`, {
        pid: child.pid,
        how,
        in_ms: delayMs,
      });
    this.pending.set(
      role,
      setTimeout(() => {
        this.pending.delete(role);
        if (!this.host.running() || !roleSpecs[role].wanted(this.host.config(), this.host.store))
          return;
        this.host.exits.restarted(role);
        this.start(role);
      }, delayMs),
    );
    return true;
  }

  /** SIGKILL to each process group the child declared (those already gone answer ESRCH). */
  private killGroups(child: Child): void {
    for (const pgid of this.groups.get(child) ?? []) {
      try {
        process.kill(-pgid, 'SIGKILL');
        log.info(`killed a process group left by the ${child.role} worker`, { pgid });
      } catch {
        // already gone
      }
    }
    this.groups.delete(child);
  }

  /** Roles waiting to be started again, as `svc status` shows them. */
  waiting(): ProcessStatus[] {
    return [...this.pending.keys()].map((role) => ({
      role,
      pid: -1,
      state: (this.backoff.get(role)?.recent ?? 0) >= 5 ? 'crash_loop' : 'backoff',
      uptime_s: 0,
      restarts: this.host.exits.restarts(role) ?? 0,
      rss_bytes: null,
      inflight_turns: 0,
      last_exit: this.host.exits.lastExit(role) ?? null,
    }));
  }

  async stop(graceMs: number): Promise<void> {
    clearTimeout(this.resync);
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
    await Promise.all(this.all().map((c) => c.stop(graceMs)));
  }
}
