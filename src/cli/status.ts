import type { Paths } from '../shared/paths.js';
import { statusSchema, type Status } from '../shared/protocol/ipc.js';
import { askControl } from '../supervisor/control-socket.js';
import { describeEngine } from '../shared/runtime.js';

/** `svc status`: asks the running supervisor; never boots any part of the server. */
export async function fetchStatus(paths: Paths): Promise<Status | undefined> {
  const raw = await askControl(paths.controlSocket, { cmd: 'status' }, 5000).catch(() => undefined);
  if (raw === undefined) return undefined;
  return statusSchema.parse(raw);
}

export function formatStatus(s: Status): string {
  const gateway = s.processes.find((p) => p.role === 'gateway');
  const engine = s.engine ? describeEngine(s.engine) : '?';
  const lines = [
    s.state === 'degraded'
      ? `svc ${s.version} is up but NOT serving: the gateway is down (${gatewayDown(gateway)}); it serves on ${s.url ?? '(no address yet)'} once back, home ${s.home}`
      : `svc ${s.version} ${s.state}, listening on ${s.url ?? '(not yet)'} (engine: ${engine}), home ${s.home}`,
  ];
  if (s.restarts > 0) lines.push(`restarted ${s.restarts} time${s.restarts === 1 ? '' : 's'}`);
  if (s.last_restart_error) lines.push(`last restart failed: ${s.last_restart_error}`);
  const rows = [
    ['ROLE', 'PID', 'STATE', 'UPTIME', 'RESTARTS', 'MEMORY', 'TURNS'],
    ...s.processes.map((p) => [
      p.role,
      p.pid > 0 ? String(p.pid) : '-',
      p.state,
      duration(p.uptime_s),
      String(p.restarts),
      p.rss_bytes === null ? '-' : `${(p.rss_bytes / 1024 / 1024).toFixed(1)} MB`,
      String(p.inflight_turns),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    lines.push(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  for (const p of s.processes) if (p.last_exit) lines.push(`${p.role} last exited: ${p.last_exit}`);
  if (s.sandbox) lines.push(s.sandbox.message);
  if (s.backup) lines.push(backupLine(s.backup));
  if (s.search?.state === 'building')
    lines.push(
      `search index: building, ${s.search.percent}% (${s.search.done} of ${s.search.total} earlier items); searches meanwhile miss the rest`,
    );
  if (s.semantic)
    lines.push(
      `search by meaning: ${s.semantic.model_id}, ${s.semantic.waiting === 0 ? 'every message embedded' : `${s.semantic.waiting} messages waiting to be embedded`}`,
    );
  return lines.join('\n');
}

function backupLine(b: NonNullable<Status['backup']>): string {
  const when = b.schedule ? `backups scheduled (${b.schedule})` : 'no scheduled backups';
  const l = b.last;
  if (!l) return `${when}; none made yet (svc backup create)`;
  return l.ok
    ? `${when}; last backup ${l.ended_at}: ${l.file} (${((l.size ?? 0) / 1024 / 1024).toFixed(1)} MB, ${(l.ms / 1000).toFixed(1)} s)`
    : `${when}; last backup FAILED ${l.ended_at}: ${l.error}`;
}

/** Why the gateway is down and when it is tried again, in words. */
function gatewayDown(p: Status['processes'][number] | undefined): string {
  const why = p?.last_exit ? `last: ${p.last_exit}` : 'no gateway process';
  if (!p?.next_try_at) return `${why}; starting it again now`;
  const inS = Math.max(0, Math.round((Date.parse(p.next_try_at) - Date.now()) / 1000));
  const what =
    p.state === 'crash_loop' ? 'it keeps failing to start, so svc pauses' : 'backing off';
  return `${why}; ${what}; next try at ${p.next_try_at} (in ${inS} s)`;
}

function duration(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}
