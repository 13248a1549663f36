import { mkdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { TurnOrigin } from '../../../shared/protocol/ipc.js';
import type { NetworkSetting } from '../../../shared/sandbox/network.js';
import { SANDBOX_EXEC, sandboxStatus, type SandboxStatus } from '../../../shared/sandbox/status.js';
import { usableSkills } from '../../../shared/skills/catalog.js';
import { getSession } from '../../../shared/store/sessions.js';
import type { ToolContext } from '../tools/registry.js';
import { cacheDirs, hiddenHolder, HOST_SOCKETS, SECRET_DIRS, type FsPlan } from './bwrap.js';
import { runtimeDirs, sandboxEnv } from './env.js';
import { linuxLaunch } from './linux.js';
import { gitGuard } from './git-guard.js';
import { skillReveals } from './skills-mount.js';
import { loadSandboxRules } from './policy.js';
import { createProxy, type EgressProxy } from './proxy.js';
import { proxyEnv } from './proxy-env.js';
import { seatbeltArgs } from './seatbelt.js';

export { sandboxStatus, type SandboxStatus } from '../../../shared/sandbox/status.js';

/** Where the sandbox's settings come from in a running worker. */
export interface SandboxOptions {
  /** config.yml `sandbox.enabled`. */
  enabled: () => boolean;
}

/** Turns with nobody to approve stepping outside: they stay inside, always. */
export const UNATTENDED: ReadonlySet<TurnOrigin> = new Set(['cron', 'channel']);

export type Launch =
  /**
   * Run as `prefix… shell -c command` with `env`, descriptors 3… as `stdio` says, `attach` once
   * started; `close` when it has ended. `refusals`: what the egress proxy refused meanwhile.
   */
  | {
      kind: 'sandboxed';
      prefix: string[];
      env: Record<string, string>;
      stdio?: Array<'ipc' | 'pipe'>;
      attach?: (child: ChildProcess) => void;
      refusals: () => string[];
      close: () => void;
      network: NetworkSetting;
    }
  /** Run as today: stepping outside was approved, or no sandbox is there (`status` says why). */
  | { kind: 'plain'; outside: boolean; status: SandboxStatus }
  | { kind: 'refused'; reason: string };

/** This user's sandbox folders: a private temp per session (0700). */
function sandboxRoot(): string {
  const root = join(tmpdir(), `svc-sandbox-${process.getuid?.() ?? 'user'}`);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return root;
}

function privateTmp(sessionId: string): string {
  const dir = join(
    sandboxRoot(),
    sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'session',
    'tmp',
  );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The network a session's commands get: its own setting, else permissions.yml's, else on. */
export function sessionNetwork(
  ctx: Pick<ToolContext, 'db' | 'sessionId'>,
  fromRules: NetworkSetting | undefined,
): NetworkSetting {
  const own = ctx.db ? getSession(ctx.db, ctx.sessionId)?.network : undefined;
  return own ?? fromRules ?? 'on';
}

/**
 * How to start one terminal command: inside the sandbox (with its proxy when the network is a
 * host list), as today (outside by approval, or no sandbox here), or not at all.
 */
export async function prepareLaunch(
  opts: SandboxOptions,
  ctx: ToolContext,
  cwd: string,
  env: Record<string, string>,
  outside: string | undefined,
): Promise<Launch> {
  const status = await sandboxStatus(opts.enabled());
  const unattended = ctx.origin !== undefined && UNATTENDED.has(ctx.origin);
  if (outside !== undefined) {
    if (unattended)
      return {
        kind: 'refused',
        reason: `Refused: ${ctx.origin} turns never run commands outside the sandbox (nobody is there to approve it). Do it inside, or leave it for the user.`,
      };
    return { kind: 'plain', outside: true, status };
  }
  if (status.state === 'off') return { kind: 'plain', outside: false, status };
  if (status.state === 'unavailable') {
    if (unattended)
      return {
        kind: 'refused',
        reason: `Refused: ${status.message}. ${ctx.origin} turns run commands only inside the sandbox.`,
      };
    return { kind: 'plain', outside: false, status };
  }
  const home = homedir();
  const svcHome = ctx.paths.home;
  const { rules, problem } = loadSandboxRules(ctx.paths.permissions, home, svcHome);
  if (problem)
    return {
      kind: 'refused',
      reason: `Not run: the sandbox section of permissions.yml has a problem, so no command runs until it is fixed: ${problem}`,
    };
  const hide = [
    svcHome,
    ...SECRET_DIRS.map((d) => join(home, d)),
    ...HOST_SOCKETS,
    ...runtimeDirs(),
    ...rules.hide,
  ];
  const holder = hiddenHolder(cwd, hide);
  if (holder)
    return {
      kind: 'refused',
      reason: `Not run: the working folder ${cwd} is inside ${holder}, which the sandbox hides. Use another working folder.`,
    };
  const tmp = privateTmp(ctx.sessionId);
  const fs: FsPlan = {
    cwd,
    tmp,
    write: [...cacheDirs(home), ...rules.write],
    hide,
    git: gitGuard(cwd, [cwd, ...rules.write]),
    reveal: skillReveals(() => usableSkills(ctx.db, ctx.paths), tmp),
  };
  const network = sessionNetwork(ctx, rules.network);
  const inner = sandboxEnv(env, rules.sockets);
  if (process.platform !== 'darwin') {
    const l = linuxLaunch(fs, network, rules, inner, ctx.sessionId);
    if (typeof l === 'string')
      return { kind: 'refused', reason: `Not run: the sandbox could not be prepared: ${l}` };
    return { kind: 'sandboxed', ...l, network };
  }
  let proxy: EgressProxy | undefined;
  try {
    // macOS has no network namespaces: the profile lets the command reach only the proxy's ports.
    if (network !== 'off')
      proxy = createProxy({
        hosts: network === 'on' ? 'any' : network,
        local: rules.localHosts,
      });
    const ports = proxy ? await proxy.listen() : undefined;
    const net = ports
      ? { mode: 'proxy' as const, ports: [ports.http, ports.socks] }
      : { mode: 'off' as const };
    const proxied = ports
      ? proxyEnv(`http://127.0.0.1:${ports.http}`, `socks5h://127.0.0.1:${ports.socks}`)
      : {};
    return {
      kind: 'sandboxed',
      prefix: [SANDBOX_EXEC, ...seatbeltArgs(fs, net)],
      env: { ...inner, ...proxied, TMPDIR: fs.tmp },
      refusals: () => proxy?.refusals() ?? [],
      close: () => proxy?.close(),
      network,
    };
  } catch (err) {
    proxy?.close();
    return {
      kind: 'refused',
      reason: `Not run: the sandbox could not be prepared: ${(err as Error).message}`,
    };
  }
}

/** Messages that usually mean a command ran into the sandbox's walls, and what each means. */
const WALLS: Array<[RegExp, (network: NetworkSetting) => string]> = [
  [/Read-only file system/i, () => 'it tried to write outside the writable folders'],
  [
    /svc sandbox: \S+ is not on this session's network list/,
    () => "the host is not on the session's network list",
  ],
  [
    /svc sandbox: \S+( \(\S+\))? is not a public address/,
    () =>
      "svc's proxy refuses loopback, private and this machine's addresses unless permissions.yml names the host and port (sandbox.local_hosts), which only the user can add",
  ],
  [/svc sandbox proxy refused/, () => "svc's proxy refused a connection (see the note above)"],
  [
    /(socket|connect|agent|bus)[^\n]{0,80}(Operation not permitted|EPERM)|(Operation not permitted|EPERM)[^\n]{0,40}(socket|connect)/i,
    () =>
      'unix sockets outside the sandbox are out of reach (permissions.yml sandbox.sockets lists the ones to keep)',
  ],
  [
    /Could not resolve host|Temporary failure in name resolution|getaddrinfo E(AI_AGAIN|NOTFOUND)|Network is unreachable|ENETUNREACH/i,
    (network) =>
      network === 'on'
        ? "the sandbox reaches the network only through svc's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it); this program did not use it"
        : "the session's network is off or limited to a host list",
  ],
];

/** A hint for the model when a sandboxed command failed on the walls, or undefined. */
export function wallHint(
  output: string,
  origin: TurnOrigin | undefined,
  network: NetworkSetting,
): string | undefined {
  const hit = WALLS.find(([re]) => re.test(output));
  if (!hit) return undefined;
  const why = hit[1](network);
  if (origin !== undefined && UNATTENDED.has(origin))
    return `[this may have hit the sandbox (${why}); ${origin} turns cannot step outside it.]`;
  return `[this may have hit the sandbox (${why}). If it really needs more, call terminal again with outside_sandbox: "<what it must reach and why>"; the user is asked first.]`;
}

/** The proxy's refusals as a note for the result (a SOCKS client or a quiet program shows none). */
export function refusalNote(refusals: readonly string[]): string | undefined {
  if (refusals.length === 0) return undefined;
  return `[svc sandbox proxy refused: ${refusals.map((r) => r.replace(/^svc sandbox: /, '')).join(' | ')}]`;
}
