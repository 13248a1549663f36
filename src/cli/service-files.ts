import { homedir } from 'node:os';
import { join } from 'node:path';
import plist from 'plist';
import { SUPERVISOR_V8_FLAGS } from '../supervisor/roles.js';

/** The service definitions `svc service install` writes: a systemd user unit or a launchd agent. */

export type Manager = 'systemd' | 'launchd';

export const SYSTEMD_UNIT = 'svc.service';
export const LAUNCHD_LABEL = 'dev.svc.serve';

export interface ServiceSpec {
  /** This Node, by absolute path: the manager's PATH may find another one, or none. */
  node: string;
  /** This install's bin/svc.js. */
  bin: string;
  home: string;
  addr: string;
  /** The installing shell's PATH, so the agent's commands find the same tools under the manager. */
  path: string;
}

export function defaultManager(): Manager | undefined {
  if (process.platform === 'linux') return 'systemd';
  if (process.platform === 'darwin') return 'launchd';
  return undefined;
}

/** Where the file goes; XDG_CONFIG_HOME and HOME are honoured (tests point them at a temp folder). */
export function serviceFile(manager: Manager, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME && env.HOME !== '' ? env.HOME : homedir();
  if (manager === 'launchd') return join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  const config =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(config, 'systemd', 'user', SYSTEMD_UNIT);
}

export function serveArgs(spec: ServiceSpec): string[] {
  return [spec.node, ...SUPERVISOR_V8_FLAGS, spec.bin, 'serve', '--addr', spec.addr];
}

export function renderService(manager: Manager, spec: ServiceSpec): string {
  return manager === 'systemd' ? systemdUnit(spec) : launchdPlist(spec);
}

/**
 * systemd runs the supervisor as the main process; `svc`'s own restart replaces only the children,
 * so systemd sees no exit. KillMode=mixed lets the supervisor stop its children itself on SIGTERM.
 */
function systemdUnit(spec: ServiceSpec): string {
  return `# Written by "svc service install"; "svc service uninstall" removes it (your data in SVC_HOME stays).
[Unit]
Description=svc personal agent server
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
ExecStart=${serveArgs(spec)
    .map((w) => systemdWord(w, true))
    .join(' ')}
Environment=${systemdWord(`SVC_HOME=${spec.home}`, false)}
Environment=${systemdWord(`PATH=${spec.path}`, false)}
Restart=on-failure
RestartSec=5
KillMode=mixed
TimeoutStopSec=60

[Install]
WantedBy=default.target
`;
}

/** One ExecStart/Environment word: quoted, with systemd's specifiers (%) and, in commands, variables ($) escaped. */
function systemdWord(word: string, exec: boolean): string {
  let escaped = word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  if (exec) escaped = escaped.replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? escaped : `"${escaped}"`;
}

/** launchd keeps svc alive after a crash (not after "svc serve --stop"); console output goes to logs/serve.log. */
function launchdPlist(spec: ServiceSpec): string {
  return (
    plist.build({
      Label: LAUNCHD_LABEL,
      ProgramArguments: serveArgs(spec),
      EnvironmentVariables: { SVC_HOME: spec.home, PATH: spec.path, SVC_DAEMONIZED: '1' },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 5,
      StandardOutPath: join(spec.home, 'logs', 'serve.log'),
      StandardErrorPath: join(spec.home, 'logs', 'serve.log'),
    }) + '\n'
  );
}
