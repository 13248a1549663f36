import { cpuSeconds } from '../shared/child.js';
import type { ProcessStatus, Status } from '../shared/protocol/ipc.js';
import type { Child } from './child-process.js';
import type { ExitLog } from './exit-log.js';

/** A child as `svc status` shows it: its own figures when it answers within a second. */
export async function childStatus(c: Child, exits: ExitLog): Promise<ProcessStatus> {
  // One already known not to answer is not waited for: status stays quick while it lasts.
  const stats =
    c.state === 'unresponsive'
      ? undefined
      : await c.endpoint.request('child.stats', {}, { to: c.role }).catch(() => undefined);
  return {
    role: c.role,
    pid: c.pid,
    state: c.state,
    uptime_s: Math.round((Date.now() - c.startedAt) / 1000),
    restarts: exits.restarts(c.role) ?? 0,
    rss_bytes: stats?.rss_bytes ?? null,
    cpu_seconds: stats?.cpu_seconds ?? null,
    inflight_turns: stats?.inflight_turns ?? 0,
    heap_used_bytes: stats?.heap_used_bytes ?? null,
    ...(stats?.counters ? { counters: stats.counters } : {}),
    last_exit: exits.lastExit(c.role) ?? null,
  };
}

/** The supervisor itself as the first line of `svc status`. */
export function supervisorStatus(state: Status['state'], startedAt: Date): ProcessStatus {
  return {
    role: 'supervisor',
    pid: process.pid,
    state:
      state === 'running'
        ? 'running'
        : state === 'draining' || state === 'restarting'
          ? 'draining'
          : 'starting',
    uptime_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
    restarts: 0,
    rss_bytes: process.memoryUsage.rss(),
    cpu_seconds: cpuSeconds(),
    inflight_turns: 0,
    heap_used_bytes: process.memoryUsage().heapUsed,
    last_exit: null,
  };
}
