import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { execa as Execa } from 'execa';
import type { OutputLog } from './output-log.js';
import {
  groupAlive,
  signalGroup,
  terminateGroup,
  trackGroup,
  untrackGroup,
} from './process-group.js';
import { importPackage } from '../../../../shared/import-package.js';

export type StreamName = 'stdout' | 'stderr';

export interface ShellExit {
  /** null when a signal ended it. */
  exitCode: number | null;
  signal: string | null;
  /** The shell ended but processes it started were still running; they were stopped. */
  leftovers: boolean;
  /** It never started (bad folder, no shell). */
  spawnError?: string;
}

export interface ShellRun {
  pid: number | undefined;
  running: () => boolean;
  done: Promise<ShellExit>;
  /** Stops the whole group (SIGTERM, SIGKILL after 2 s); resolves when it is gone. */
  stop: () => Promise<void>;
}

/** How long after the shell exits its output pipes may stay open before the rest is stopped. */
const DRAIN_MS = 1000;

const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

// The worker's own plumbing, never meant for a command: the IPC channel to the supervisor and
// svc's role and key.
const hiddenNames = new Set([
  'SVC_ACCESS_KEY',
  'SVC_ROLE',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
]);

/**
 * Under an npm script (`npm start`, `npm test`) npm exports its whole configuration and svc's own
 * package as npm_* variables. They describe svc's launch, not the user's shell: npm_config_cache
 * would point a sandboxed `npm install` at a read-only folder, npm_config_prefix at svc's. A
 * command's npm reads the user's .npmrc itself.
 */
function npmLaunchVar(name: string, base: NodeJS.ProcessEnv): boolean {
  return base.npm_lifecycle_event !== undefined && (name.startsWith('npm_') || name === 'INIT_CWD');
}

/**
 * The worker's environment minus svc's own plumbing, what npm set when it launched svc, and any
 * variable holding a provider key (equal to one, or containing one that is long enough not to
 * match by chance).
 */
export function commandEnv(
  secrets: readonly string[],
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const exact = new Set(secrets.filter((s) => s.length > 0));
  const long = secrets.filter((s) => s.length >= 12);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || hiddenNames.has(k) || npmLaunchVar(k, base)) continue;
    if (exact.has(v) || long.some((s) => v.includes(s))) continue;
    env[k] = v;
  }
  return env;
}

let execa: typeof Execa | undefined;

/**
 * Loads execa, once, with a worker's first command: a worker that runs none does not keep it
 * (about 6 MB resident; issue 37). The terminal tool awaits this before it spawns.
 */
export async function loadShell(): Promise<void> {
  execa ??= (await importPackage<typeof import('execa')>('execa')).execa;
}

/** Runs `command` through the shell as its own process group, with stdin closed (after loadShell()). */
export function spawnShell(opts: {
  command: string;
  cwd: string;
  env: Record<string, string>;
  log: OutputLog;
  onChunk?: (stream: StreamName, chunk: string) => void;
  /** A launcher the shell runs under (the sandbox: `bwrap … --`); its process leads the group. */
  prefix?: readonly string[];
  /** The launcher's descriptors 3… (the sandbox's bridge channel, its seccomp program). */
  extraStdio?: ReadonlyArray<'ipc' | 'pipe'>;
  /** Called once the launcher has started, to feed those descriptors. */
  attach?: (child: ChildProcess) => void;
  /**
   * The launcher ends everything the command started when the command ends (bwrap's own pid
   * namespace): what is still in the group is only the launcher's teardown, not a leftover.
   */
  contained?: boolean;
}): ShellRun {
  const argv = [...(opts.prefix ?? []), shell, '-c', opts.command];
  if (!execa) throw new Error('spawnShell before loadShell');
  const sub = execa(argv[0]!, argv.slice(1), {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    stdio: ['ignore', 'pipe', 'pipe', ...(opts.extraStdio ?? [])],
    detached: true,
    buffer: false,
    reject: false,
    cleanup: false,
    encoding: 'utf8',
  });
  const pid = sub.pid;
  if (pid !== undefined) opts.attach?.(sub);
  let running = pid !== undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    if (pid === undefined) return Promise.resolve();
    stopping ??= terminateGroup(pid);
    return stopping;
  };
  if (pid !== undefined) trackGroup(pid);

  for (const name of ['stdout', 'stderr'] as const) {
    const stream = sub[name];
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      opts.log.append(chunk);
      opts.onChunk?.(name, chunk);
    });
    stream.on('error', () => {});
  }

  const done = (async (): Promise<ShellExit> => {
    if (pid === undefined) {
      const r = await sub;
      return {
        exitCode: null,
        signal: null,
        leftovers: false,
        spawnError: r.shortMessage ?? 'the shell could not be started',
      };
    }
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      sub.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const closed = new Promise<void>((resolve) => sub.once('close', () => resolve()));
    const { code, signal } = await exited;
    running = false;
    // A process the command left behind may hold the pipes open; give the output a moment, then
    // stop the rest of the group so nothing outlives the call.
    await Promise.race([closed, new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
    let leftovers = false;
    if (!stopping && groupAlive(pid)) {
      if (opts.contained) signalGroup(pid, 'SIGKILL');
      else {
        leftovers = true;
        await stop();
      }
    } else if (stopping) await stopping;
    sub.stdout.destroy();
    sub.stderr.destroy();
    untrackGroup(pid);
    void sub.catch(() => {});
    return { exitCode: code, signal, leftovers };
  })();

  return { pid, running: () => running, done, stop };
}
