import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { z } from 'zod';

/**
 * Whether terminal commands run in an OS sandbox here, and if not, why and how to fix it. Every
 * process that shows or uses it (supervisor for `svc status`, gateway for /api/health, the agent
 * that runs commands) asks the same probe, so they cannot disagree.
 */
export const sandboxStatusSchema = z.object({
  state: z.enum(['on', 'off', 'unavailable']),
  /** What isolates commands when on: `bubblewrap 0.8.0`, `sandbox-exec`. */
  engine: z.string().nullable(),
  /** Why it is off or unavailable. */
  reason: z.string().nullable(),
  /** The one-line fix when unavailable (or how to turn it back on when off). */
  fix: z.string().nullable(),
  /** One line for status surfaces: `sandbox on (bubblewrap 0.8.0)`, `sandbox unavailable: …`. */
  message: z.string(),
});
export type SandboxStatus = z.infer<typeof sandboxStatusSchema>;

/** The bubblewrap program: SVC_SANDBOX_BWRAP overrides the path (tests force a missing one). */
export function bwrapPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_SANDBOX_BWRAP && env.SVC_SANDBOX_BWRAP.length > 0
    ? env.SVC_SANDBOX_BWRAP
    : '/usr/bin/bwrap';
}

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The isolation flags the probe tries are the ones every command uses, so a pass means commands can start. */
export function probeArgs(isRoot: boolean): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-net',
    '--die-with-parent',
    ...(isRoot ? ['--cap-drop', 'ALL'] : []),
    '--',
    '/bin/true',
  ];
}

function status(
  state: SandboxStatus['state'],
  engine: string | null,
  reason: string | null,
  fix: string | null,
): SandboxStatus {
  const message =
    state === 'on'
      ? `sandbox on (${engine})`
      : state === 'off'
        ? `sandbox off: ${reason}`
        : `sandbox unavailable: ${reason}; fix: ${fix}`;
  return { state, engine, reason, fix, message };
}

function run(file: string, args: string[]): Promise<{ ok: boolean; out: string; code?: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, out: `${stdout}${stderr}`.trim() });
      const code = (err as NodeJS.ErrnoException).code;
      resolve({
        ok: false,
        out: `${stderr}`.trim() || err.message,
        code: typeof code === 'string' ? code : undefined,
      });
    });
  });
}

const INSTALL_FIX =
  'install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap), then restart svc';

async function probeLinux(bwrap: string): Promise<SandboxStatus> {
  try {
    accessSync(bwrap, constants.X_OK);
  } catch {
    return status('unavailable', null, `${bwrap} is missing or not executable`, INSTALL_FIX);
  }
  const isRoot = process.getuid?.() === 0;
  // Side by side: the first /api/health of a start waits for both.
  const [tried, version] = await Promise.all([
    run(bwrap, probeArgs(isRoot)),
    run(bwrap, ['--version']),
  ]);
  if (!tried.ok) {
    if (tried.code === 'ENOENT' || tried.code === 'EACCES')
      return status('unavailable', null, `${bwrap} cannot be run (${tried.code})`, INSTALL_FIX);
    const first = tried.out.split('\n')[0]!.slice(0, 300);
    return status(
      'unavailable',
      null,
      `bubblewrap cannot create namespaces here (${first})`,
      'allow unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0), or run svc outside this container/WSL1, then restart svc',
    );
  }
  return status(
    'on',
    version.ok && version.out ? version.out.split('\n')[0]! : 'bubblewrap',
    null,
    null,
  );
}

let memo: { key: string; result: Promise<SandboxStatus> } | undefined;

/**
 * The sandbox's state for this process, probed once per (enabled, platform, program) and then
 * remembered: a real sandboxed `true` is started, so "on" means commands will start.
 */
export function sandboxStatus(
  enabled: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SandboxStatus> {
  const bwrap = bwrapPath(env);
  const key = `${enabled}\u0000${process.platform}\u0000${bwrap}`;
  if (memo?.key === key) return memo.result;
  let result: Promise<SandboxStatus>;
  if (!enabled)
    result = Promise.resolve(
      status(
        'off',
        null,
        'turned off in config.yml (sandbox.enabled: false)',
        'set sandbox.enabled: true in config.yml and restart svc',
      ),
    );
  else if (process.platform === 'linux') result = probeLinux(bwrap);
  else if (process.platform === 'darwin') {
    let ok = true;
    try {
      accessSync(SANDBOX_EXEC, constants.X_OK);
    } catch {
      ok = false;
    }
    result = Promise.resolve(
      ok
        ? status('on', 'sandbox-exec', null, null)
        : status(
            'unavailable',
            null,
            `${SANDBOX_EXEC} is missing`,
            'use a macOS that ships sandbox-exec',
          ),
    );
  } else
    result = Promise.resolve(
      status(
        'unavailable',
        null,
        `no sandbox is known for ${process.platform}`,
        'run svc on Linux with bubblewrap, or on macOS',
      ),
    );
  memo = { key, result };
  return result;
}
