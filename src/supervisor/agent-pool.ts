import { CHILD_START_MS, type Child } from './child-process.js';
import type { Config } from '../shared/config/schema.js';
import { IdleRetirer } from './idle-retire.js';

export interface AgentPoolHost {
  /** Forks an agent worker with the supervisor's handlers attached. */
  spawn: () => Child;
  config: () => Config;
  /** Turns a worker is running now (a turn outweighs any number of plain requests). */
  turnsOn: (agent: Child) => number;
  /** False while svc drains or stops: then no worker is started. */
  accepting: () => boolean;
  stopGraceMs: number;
}

/**
 * The agent workers: grown on demand up to `agent.max_workers`, the least busy one picked for
 * each piece of work, and idle ones retired so an idle svc is back to two processes.
 */
export class AgentPool {
  private members: Child[] = [];
  private readonly idle: IdleRetirer;

  constructor(private readonly host: AgentPoolHost) {
    this.idle = new IdleRetirer({
      members: () => this.members,
      busy: (a) => host.turnsOn(a) > 0 || a.endpoint.inflight > 0,
      idleSeconds: () => host.config().agent.idle_retire_seconds,
      withdraw: (a) => this.remove(a),
      restore: (a) => {
        if (a.alive && !this.members.includes(a)) this.members.push(a);
      },
      stopGraceMs: host.stopGraceMs,
    });
  }

  all(): readonly Child[] {
    return this.members;
  }

  start(): void {
    this.idle.start();
  }

  /**
   * The least busy worker (fewest turns, then fewest requests in flight). A turn (`grow`) gets a
   * new worker when every one is busy and the pool may grow; any request gets one when none runs.
   */
  pick(grow: boolean): Child | undefined {
    const load = (a: Child) => this.host.turnsOn(a) * 1000 + a.endpoint.inflight;
    const least = this.members
      .filter((a) => a.alive)
      .reduce<Child | undefined>(
        (best, a) => (best === undefined || load(a) < load(best) ? a : best),
        undefined,
      );
    if (!this.host.accepting()) return least;
    if (!least) return this.grow();
    if (
      grow &&
      this.host.turnsOn(least) > 0 &&
      this.members.length < this.host.config().agent.max_workers
    )
      return this.grow();
    return least;
  }

  private grow(): Child {
    const agent = this.host.spawn();
    agent.state = 'running';
    this.members.push(agent);
    void agent.endpoint
      .request(
        'child.start',
        { config: this.host.config() },
        { to: 'agent', timeoutMs: CHILD_START_MS },
      )
      .catch(() => undefined);
    return agent;
  }

  /** A worker that exited (or retires): no work reaches it again. */
  remove(agent: Child): void {
    const i = this.members.indexOf(agent);
    if (i >= 0) this.members.splice(i, 1);
  }

  /** Every worker, taken out of the pool: a restart replaces them, or gives them back with `adopt`. */
  takeAll(): Child[] {
    return this.members.splice(0);
  }

  adopt(workers: Child[]): void {
    this.members.push(...workers);
  }

  async stop(): Promise<void> {
    this.idle.stop();
    await Promise.all(this.takeAll().map((a) => a.stop(this.host.stopGraceMs)));
  }
}
