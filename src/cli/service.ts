import { cleanPath } from '../shared/npm-env.js';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import plist from 'plist';
import { z } from 'zod';
import { writeFileAtomic } from '../shared/atomic-write.js';
import type { Paths } from '../shared/paths.js';
import { packageRoot } from '../shared/version.js';
import { askControl } from '../supervisor/control-socket.js';
import {
  LAUNCHD_LABEL,
  renderService,
  serviceFile,
  SYSTEMD_UNIT,
  type Manager,
  type ServiceSpec,
} from './service-files.js';

/** `svc service install | uninstall | status`: svc as a systemd user service or a launchd agent. */

export function thisInstall(paths: Paths, addr: string): ServiceSpec {
  return {
    node: process.execPath,
    bin: join(packageRoot, 'bin', 'svc.js'),
    home: paths.home,
    addr,
    path: cleanPath(process.env.PATH ?? '') || '/usr/local/bin:/usr/bin:/bin',
  };
}

interface Ran {
  ok: boolean;
  /** The program is not installed at all. */
  missing: boolean;
  out: string;
  /** First line of what it said on failure. */
  why: string;
}

/** Runs the service manager's tool; never throws: a missing tool or a failure is reported. */
export function runTool(cmd: string, args: string[], timeoutMs = 15_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      const missing = (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
      const why = (stderr.trim() || stdout.trim() || (err ? err.message : '')).split('\n')[0] ?? '';
      resolve({
        ok: err === null,
        missing,
        out: stdout.trim(),
        why: missing ? `${cmd} is not installed` : why,
      });
    });
  });
}

const manual: Record<Manager, { start: string; stop: string }> = {
  systemd: {
    start: `systemctl --user daemon-reload && systemctl --user enable --now ${SYSTEMD_UNIT}`,
    stop: `systemctl --user disable --now ${SYSTEMD_UNIT}`,
  },
  launchd: {
    start: `launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`,
    stop: `launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}`,
  },
};

export async function installService(
  paths: Paths,
  manager: Manager,
  spec: ServiceSpec,
  start: boolean,
): Promise<string[]> {
  const file = serviceFile(manager);
  mkdirSync(dirname(file), { recursive: true });
  mkdirSync(join(paths.home, 'logs'), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, renderService(manager, spec), 0o644);
  const out = [
    `Wrote ${file} (runs ${spec.node} ${spec.bin} serve --addr ${spec.addr}, SVC_HOME=${spec.home})`,
  ];
  if (!start) return [...out, `Not started (--no-start). Start it with: ${manual[manager].start}`];
  const running = await askControl(paths.controlSocket, { cmd: 'status' }, 2000).then(
    () => true,
    () => false,
  );
  if (manager === 'systemd') {
    const reload = await runTool('systemctl', ['--user', 'daemon-reload']);
    if (!reload.ok)
      return [
        ...out,
        `Not started: ${reload.why}. Where a systemd user manager runs, start it with: ${manual.systemd.start}`,
      ];
    const enable = await runTool('systemctl', [
      '--user',
      'enable',
      ...(running ? [] : ['--now']),
      SYSTEMD_UNIT,
    ]);
    if (!enable.ok) return [...out, `Not enabled: ${enable.why}`];
    out.push(
      running
        ? `Enabled; not started because svc already runs for ${paths.home}: stop it ("svc serve --stop"), then run "systemctl --user start ${SYSTEMD_UNIT}"`
        : `Enabled and started; "svc service status" or "systemctl --user status ${SYSTEMD_UNIT}" shows it`,
    );
    const linger = await lingerState();
    if (linger === 'no') out.push(lingerAdvice());
    return out;
  }
  const domain = `gui/${userInfo().uid}`;
  if (running)
    return [
      ...out,
      `Not loaded: svc already runs for ${paths.home}; stop it ("svc serve --stop"), then run: ${manual.launchd.start}`,
    ];
  await runTool('launchctl', ['bootout', `${domain}/${LAUNCHD_LABEL}`]); // an older copy, if loaded
  const boot = await runTool('launchctl', ['bootstrap', domain, file]);
  if (!boot.ok) return [...out, `Not started: ${boot.why}. Start it with: ${manual.launchd.start}`];
  return [...out, 'Loaded and started; it starts again at every login'];
}

export async function uninstallService(paths: Paths, manager: Manager): Promise<string[]> {
  const file = serviceFile(manager);
  if (readText(file) === undefined)
    return [`No svc service is installed (${file} does not exist); nothing to remove`];
  const out: string[] = [];
  const stop =
    manager === 'systemd'
      ? await runTool('systemctl', ['--user', 'disable', '--now', SYSTEMD_UNIT])
      : await runTool('launchctl', ['bootout', `gui/${userInfo().uid}/${LAUNCHD_LABEL}`]);
  out.push(
    stop.ok
      ? 'Stopped and disabled'
      : `Could not stop it through the service manager (${stop.why}); if it still runs, stop it with "svc serve --stop"`,
  );
  rmSync(file, { force: true });
  if (manager === 'systemd') await runTool('systemctl', ['--user', 'daemon-reload']);
  out.push(`Removed ${file}; your data in ${paths.home} is kept`);
  return out;
}

export interface ServiceState {
  manager: Manager;
  file: string;
  installed: boolean;
  /** What the installed file runs, when it can be read. */
  runs: {
    node: string | null;
    bin: string | null;
    home: string | null;
    addr: string | null;
  } | null;
  /** Whether it runs this Node, this install and this SVC_HOME. */
  matches_this_install: boolean | null;
  /** The manager's own word (active, inactive, failed, …), or null with why. */
  active: string | null;
  enabled: string | null;
  manager_note: string | null;
  linger: 'yes' | 'no' | null;
}

export async function inspectService(paths: Paths, manager: Manager): Promise<ServiceState> {
  const file = serviceFile(manager);
  const text = readText(file);
  const state: ServiceState = {
    manager,
    file,
    installed: text !== undefined,
    runs: null,
    matches_this_install: null,
    active: null,
    enabled: null,
    manager_note: null,
    linger: null,
  };
  if (text === undefined) return state;
  state.runs = manager === 'systemd' ? readUnit(text) : readPlist(text);
  const here = thisInstall(paths, '');
  state.matches_this_install =
    state.runs.node === here.node && state.runs.bin === here.bin && state.runs.home === here.home;
  if (manager === 'systemd') {
    const [active, enabled] = await Promise.all([
      runTool('systemctl', ['--user', 'is-active', SYSTEMD_UNIT]),
      runTool('systemctl', ['--user', 'is-enabled', SYSTEMD_UNIT]),
    ]);
    // is-active answers non-zero for "inactive": its word is still the answer
    if (active.out !== '') state.active = active.out;
    if (enabled.out !== '') state.enabled = enabled.out;
    if (state.active === null) state.manager_note = active.why || 'systemctl gave no answer';
    state.linger = await lingerState();
  } else {
    const got = await runTool('launchctl', ['print', `gui/${userInfo().uid}/${LAUNCHD_LABEL}`]);
    if (got.ok) state.active = /state = (\S+)/.exec(got.out)?.[1] ?? 'loaded';
    else if (got.missing) state.manager_note = got.why;
    else state.active = 'not loaded';
  }
  return state;
}

export function formatServiceState(s: ServiceState): string[] {
  if (!s.installed)
    return [
      `No svc service is installed (${s.file} does not exist); "svc service install" runs svc at ${s.manager === 'systemd' ? 'boot or login' : 'login'}`,
    ];
  const lines = [`${s.manager} service: ${s.file}`];
  if (s.runs)
    lines.push(
      `runs ${s.runs.node ?? '?'} ${s.runs.bin ?? '?'} serve --addr ${s.runs.addr ?? '?'} with SVC_HOME=${s.runs.home ?? '?'}`,
    );
  if (s.matches_this_install === false)
    lines.push(
      'it runs another Node, install or SVC_HOME than this svc; "svc service install" rewrites it for this one',
    );
  if (s.active !== null) lines.push(`state: ${s.active}${s.enabled ? `, ${s.enabled}` : ''}`);
  else lines.push(`state unknown: ${s.manager_note ?? 'the service manager did not answer'}`);
  if (s.linger === 'no') lines.push(lingerAdvice());
  return lines;
}

async function lingerState(): Promise<'yes' | 'no' | null> {
  const r = await runTool('loginctl', [
    'show-user',
    userInfo().username,
    '--property=Linger',
    '--value',
  ]);
  return r.ok && (r.out === 'yes' || r.out === 'no') ? r.out : null;
}

export function lingerAdvice(): string {
  return `Linger is off for ${userInfo().username}: systemd starts user services at your login and stops them when you log out. For svc to run from boot without a login, run: sudo loginctl enable-linger ${userInfo().username}`;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The script Node runs: the first word after Node that is not one of its flags. */
function binOf(words: readonly string[]): string | null {
  return words.slice(1).find((w) => !w.startsWith('-')) ?? null;
}

/** ExecStart and SVC_HOME back out of a unit this command wrote (quoted words, escapes undone). */
function readUnit(text: string) {
  const value = (key: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${key}=`))
      .map((l) => l.slice(key.length + 1));
  const words = (line: string) =>
    [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) =>
      (m[1] ?? m[2] ?? '').replace(/\\(.)/g, '$1').replace(/%%/g, '%').replace(/\$\$/g, '$'),
    );
  const exec = words(value('ExecStart')[0] ?? '');
  const env = value('Environment').flatMap(words);
  const home = env.find((e) => e.startsWith('SVC_HOME='))?.slice('SVC_HOME='.length) ?? null;
  const addrAt = exec.indexOf('--addr');
  return {
    node: exec[0] ?? null,
    bin: binOf(exec),
    home,
    addr: addrAt >= 0 ? (exec[addrAt + 1] ?? null) : null,
  };
}

const plistShape = z.object({
  ProgramArguments: z.array(z.string()).default([]),
  EnvironmentVariables: z.record(z.string(), z.string()).default({}),
});

function readPlist(text: string) {
  let parsed: z.infer<typeof plistShape>;
  try {
    parsed = plistShape.parse(plist.parse(text));
  } catch {
    return { node: null, bin: null, home: null, addr: null };
  }
  const args = parsed.ProgramArguments;
  const addrAt = args.indexOf('--addr');
  return {
    node: args[0] ?? null,
    bin: binOf(args),
    home: parsed.EnvironmentVariables.SVC_HOME ?? null,
    addr: addrAt >= 0 ? (args[addrAt + 1] ?? null) : null,
  };
}
