import { readFileSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { type Check, type Context, ok, warn } from './check.js';

/** The pid file and control socket against what actually runs. `--fix` removes stale ones. */
export function checkProcess(ctx: Context): Check {
  const { paths, running } = ctx;
  if (running) {
    const s = z
      .object({
        state: z.string(),
        processes: z.array(z.object({ role: z.string(), pid: z.number() })),
      })
      .safeParse(running);
    const pid = s.success ? s.data.processes.find((p) => p.role === 'supervisor')?.pid : undefined;
    return ok(
      'running',
      `svc runs${pid ? ` (supervisor pid ${pid})` : ''}, ${s.success ? s.data.state : 'state unknown'}`,
    );
  }
  let pid: number | undefined;
  try {
    pid = Number(readFileSync(paths.pidFile, 'utf8').trim()) || undefined;
  } catch {
    // no pid file
  }
  if (pid === undefined)
    return ok(
      'running',
      'svc is not running (start it with "svc serve", "svc serve -d" or "svc service install")',
    );
  const alive = isAlive(pid);
  if (alive && readCmdline(pid) === undefined)
    return warn(
      'running',
      `the pid file names process ${pid}, which runs, but the control socket does not answer; cannot tell whether it is svc`,
      `if it is not svc, remove ${paths.pidFile}`,
    );
  if (alive && readCmdline(pid)?.includes('svc'))
    return warn(
      'running',
      `svc (pid ${pid}) runs but its control socket does not answer; it may be starting or stuck`,
      `wait and rerun svc doctor; if it persists, svc serve --stop (or kill ${pid})`,
    );
  return {
    ...warn(
      'running',
      `svc is not running, but a stale pid file names process ${pid}`,
      'svc doctor --fix removes it (svc serve also replaces it)',
    ),
    repair: () => {
      rmSync(paths.pidFile, { force: true });
      rmSync(paths.controlSocket, { force: true });
      return `removed the stale ${paths.pidFile}`;
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}
