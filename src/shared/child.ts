import { Endpoint, parentLink } from './protocol/endpoint.js';
import type { ChildRole } from './protocol/ipc.js';
import { collectWhenIdle } from './idle-gc.js';
import { log, setLogRole } from './log.js';

/**
 * What every child process does first: name its log lines, open its IPC endpoint, answer the
 * supervisor's stats and echo requests, and exit the moment the supervisor is gone so that no
 * child outlives it.
 */
export function startChild(
  role: ChildRole,
  inflightTurns: () => number = () => 0,
  /** Figures of what the process keeps, for `svc status --json` (the gateway's /ws history). */
  counters?: () => Record<string, number>,
): Endpoint {
  setLogRole(role);
  const endpoint = new Endpoint(parentLink(), role, 'supervisor');
  process.on('disconnect', () => {
    log.info('the supervisor is gone; exiting');
    process.exit(0);
  });
  endpoint.handle('child.stats', () => ({
    rss_bytes: process.memoryUsage.rss(),
    cpu_seconds: cpuSeconds(),
    inflight_turns: inflightTurns(),
    heap_used_bytes: process.memoryUsage().heapUsed,
    ...(counters ? { counters: counters() } : {}),
  }));
  endpoint.handle('child.ping', () => ({}));
  endpoint.handle('worker.echo', (p) => ({ text: p.text, role, pid: process.pid }));
  endpoint.emit('child.ready', { role, pid: process.pid });
  collectWhenIdle(() => inflightTurns() > 0);
  return endpoint;
}

/** CPU time (user + system) this process used, in seconds. */
export function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}
