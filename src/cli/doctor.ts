import { z } from 'zod';
import { loadServeEnv } from '../shared/config/serve-env.js';
import type { Paths } from '../shared/paths.js';
import { askControl } from '../supervisor/control-socket.js';
import type { Check, Context } from './doctor/check.js';
import { allChecks } from './doctor/checks.js';
import { readConfig } from './doctor/config.js';

/** `svc doctor`: one line per check, ok / warn / fail with the fix; `--fix` repairs what is safe to. */

export interface DoctorReport {
  ok: boolean;
  fixed: string[];
  checks: Omit<Check, 'repair'>[];
}

async function runChecks(paths: Paths, modelTimeoutMs: number): Promise<Check[]> {
  const raw = await askControl(paths.controlSocket, { cmd: 'status' }, 3000).catch(() => undefined);
  const running = z.record(z.string(), z.unknown()).safeParse(raw);
  const ctx: Context = {
    paths,
    running: running.success ? running.data : undefined,
    config: readConfig(paths),
    modelTimeoutMs,
  };
  return allChecks(ctx);
}

export async function doctor(
  paths: Paths,
  opts: { fix: boolean; modelTimeoutMs: number },
): Promise<DoctorReport> {
  process.umask(0o077); // whatever the checks touch stays private
  loadServeEnv(paths.serveEnv); // provider keys, as the server sees them
  let checks = await runChecks(paths, opts.modelTimeoutMs);
  const fixed: string[] = [];
  if (opts.fix) {
    for (const c of checks) {
      if (!c.repair) continue;
      try {
        fixed.push(c.repair());
      } catch (err) {
        fixed.push(`could not repair ${c.id}: ${(err as Error).message}`);
      }
    }
    if (fixed.length > 0) checks = await runChecks(paths, opts.modelTimeoutMs);
  }
  return {
    ok: !checks.some((c) => c.status === 'fail'),
    fixed,
    checks: checks.map(({ repair: _, ...c }) => c),
  };
}

export function formatReport(r: DoctorReport): string {
  const width = Math.max(...r.checks.map((c) => c.id.length));
  const lines = r.fixed.map((f) => `fixed ${f}`);
  for (const c of r.checks)
    lines.push(
      `${c.status.padEnd(4)}  ${c.id.padEnd(width)}  ${c.message}${c.fix ? ` (fix: ${c.fix})` : ''}`,
    );
  const count = (s: Check['status']) => r.checks.filter((c) => c.status === s).length;
  lines.push(`${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail`);
  return lines.join('\n');
}
