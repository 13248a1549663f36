import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { OutputLog, outputFile } from './output-log.js';
import { spawnShell, type ShellExit, type ShellRun } from './shell-process.js';

/** How much of a background command's latest output stays readable in memory (the rest is in its file). */
const WINDOW = 1024 * 1024;
export const MAX_RUNNING = 16;
/** Finished entries kept for reading; the oldest finished ones go first. */
const MAX_KEPT = 64;

export interface BackgroundProc {
  id: string;
  sessionId: string;
  command: string;
  startedAt: string;
  log: OutputLog;
  run: ShellRun;
  exit: ShellExit | undefined;
  stopped: boolean;
}

/** This worker's background commands; each is killed with its group when the worker exits. */
const procs = new Map<string, BackgroundProc>();

export function runningCount(): number {
  return [...procs.values()].filter((p) => p.exit === undefined).length;
}

export function startBackground(opts: {
  sessionId: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  svcHome: string;
  prefix?: readonly string[];
  extraStdio?: ReadonlyArray<'ipc' | 'pipe'>;
  attach?: (child: ChildProcess) => void;
  onEnd?: () => void;
}): BackgroundProc {
  const id = `bg_${randomBytes(4).toString('hex')}`;
  const log = new OutputLog(() => outputFile(opts.svcHome, opts.sessionId, id), WINDOW);
  const run = spawnShell({
    command: opts.command,
    cwd: opts.cwd,
    env: opts.env,
    log,
    prefix: opts.prefix,
    extraStdio: opts.extraStdio,
    attach: opts.attach,
    contained: opts.prefix !== undefined,
  });
  const proc: BackgroundProc = {
    id,
    sessionId: opts.sessionId,
    command: opts.command,
    startedAt: new Date().toISOString(),
    log,
    run,
    exit: undefined,
    stopped: false,
  };
  procs.set(id, proc);
  void run.done.then((exit) => {
    opts.onEnd?.();
    proc.exit = exit;
    log.close();
    prune();
  });
  return proc;
}

/** A session sees only its own background commands. */
export function getBackground(id: string, sessionId: string): BackgroundProc | undefined {
  const p = procs.get(id);
  return p && p.sessionId === sessionId ? p : undefined;
}

export async function stopBackground(p: BackgroundProc): Promise<ShellExit> {
  p.stopped = true;
  await p.run.stop();
  return p.run.done;
}

/** Stops every background command a session started (for session delete). */
export async function stopSessionBackground(sessionId: string): Promise<void> {
  await Promise.all(
    [...procs.values()]
      .filter((p) => p.sessionId === sessionId && p.exit === undefined)
      .map(stopBackground),
  );
}

function prune(): void {
  const finished = [...procs.values()].filter((p) => p.exit !== undefined);
  for (const p of finished.slice(0, Math.max(0, finished.length - MAX_KEPT))) procs.delete(p.id);
}
