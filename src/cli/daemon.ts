import { withoutNpm } from '../shared/npm-env.js';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import {
  DEFAULT_LOG_FILE_BYTES,
  DEFAULT_LOG_FILES_KEPT,
  rotateLogFile,
} from '../shared/log-files.js';
import type { Paths } from '../shared/paths.js';
import { statusSchema } from '../shared/protocol/ipc.js';
import { askControl } from '../supervisor/control-socket.js';
import { withSupervisorFlags } from '../supervisor/roles.js';

const READY_TIMEOUT_MS = 20_000;

/** `svc serve -d`: starts a detached supervisor (logs under logs/, console output in logs/serve.log) and waits until it serves. */
export async function startDaemon(
  paths: Paths,
  args: string[],
): Promise<{ pid: number; url: string | null; key: string }> {
  if (await askControl(paths.controlSocket, { cmd: 'status' }, 2000).catch(() => undefined)) {
    throw new Error(
      `svc is already running for ${paths.home}; stop it with "svc serve --stop" first`,
    );
  }
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  // serve.log keeps only what the daemon prints outside its log (its start line, a crash trace)
  if (sizeOf(paths.serveLog) > DEFAULT_LOG_FILE_BYTES)
    rotateLogFile(paths.serveLog, DEFAULT_LOG_FILES_KEPT);
  // Where this run's lines start: a failure prints those, never an earlier run's.
  const runStart = sizeOf(paths.serveLog);
  const out = openSync(paths.serveLog, 'a', 0o600);
  const child = spawn(
    process.execPath,
    [...withSupervisorFlags(process.execArgv), process.argv[1] ?? 'svc', 'serve', ...args],
    {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...withoutNpm(process.env), SVC_DAEMONIZED: '1' },
    },
  );
  closeSync(out);
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? 1));
  child.unref();
  const until = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < until) {
    if (exited !== null)
      throw new Error(
        `svc did not start (exit code ${exited}); see ${paths.serveLog}:\n${linesSince(paths.serveLog, runStart)}`,
      );
    const status = await askControl(paths.controlSocket, { cmd: 'status' }, 1000).then(
      (s) => statusSchema.safeParse(s),
      () => undefined,
    );
    if (status?.success && status.data.state === 'running') {
      const open = (await askControl(paths.controlSocket, { cmd: 'open_url' })) as {
        url: string | null;
        key: string;
      };
      return { pid: child.pid ?? -1, url: open.url, key: open.key };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `svc did not become ready within ${READY_TIMEOUT_MS / 1000} s; see ${paths.serveLog}`,
  );
}

/** `svc serve --stop`: asks the supervisor to stop and waits until it is gone. */
export async function stopDaemon(paths: Paths): Promise<number | undefined> {
  let pid: number | undefined;
  try {
    pid = Number(readFileSync(paths.pidFile, 'utf8').trim()) || undefined;
  } catch {
    // no pid file: ask the socket anyway
  }
  const asked = await askControl(paths.controlSocket, { cmd: 'stop' }, 3000).then(
    () => true,
    () => false,
  );
  if (!asked) {
    if (pid === undefined || !alive(pid)) return undefined;
    process.kill(pid, 'SIGTERM');
  }
  const until = Date.now() + 15_000;
  while (pid !== undefined && alive(pid) && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  if (pid !== undefined && alive(pid)) throw new Error(`svc (pid ${pid}) did not stop within 15 s`);
  return pid ?? -1;
}

/** Whether a process of ours runs (signal 0; another user's process counts as gone here). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The last lines a file gained past `offset` (this run's part of an appended log). */
function linesSince(file: string, offset: number, max = 20): string {
  try {
    return readFileSync(file)
      .subarray(offset)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .slice(-max)
      .join('\n');
  } catch {
    return '';
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
