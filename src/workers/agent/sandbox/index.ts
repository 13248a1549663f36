import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { codePath, startedByPath } from '../../../shared/code-root.js';
import type { TurnOrigin } from '../../../shared/protocol/ipc.js';
import type { NetworkSetting } from '../../../shared/sandbox/network.js';
import {
  bwrapPath,
  SANDBOX_EXEC,
  sandboxStatus,
  type SandboxStatus,
} from '../../../shared/sandbox/status.js';
import { getSession } from '../../../shared/store/sessions.js';
import type { ToolContext } from '../tools/registry.js';
import {
  bwrapArgs,
  cacheDirs,
  hiddenHolder,
  HOST_SOCKETS,
  INNER_PROXY_SOCKET,
  SECRET_DIRS,
  type FsPlan,
} from './bwrap.js';
import { loadSandboxRules } from './policy.js';
import { startProxy, type NetworkProxy } from './proxy.js';
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
  /** Run as `prefix… shell -c command` with `env`; `close` when it has ended. */
  | {
      kind: 'sandboxed';
      prefix: string[];
      env: Record<string, string>;
      close: () => void;
      network: NetworkSetting;
    }
  /** Run as today: stepping outside was approved, or no sandbox is there (`status` says why). */
  | { kind: 'plain'; outside: boolean; status: SandboxStatus }
  | { kind: 'refused'; reason: string };

const bridgeScript = codePath(startedByPath.sandboxBridge);

/** This user's sandbox folders: private temps per session and proxy sockets (0700). */
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
  const hide = [svcHome, ...SECRET_DIRS.map((d) => join(home, d)), ...HOST_SOCKETS, ...rules.hide];
  const holder = hiddenHolder(cwd, hide);
  if (holder)
    return {
      kind: 'refused',
      reason: `Not run: the working folder ${cwd} is inside ${holder}, which the sandbox hides. Use another working folder.`,
    };
  const fs: FsPlan = {
    cwd,
    tmp: privateTmp(ctx.sessionId),
    write: [...cacheDirs(home), ...rules.write],
    hide,
  };
  const network = sessionNetwork(ctx, rules.network);
  let proxy: NetworkProxy | undefined;
  const close = () => proxy?.close();
  try {
    if (process.platform === 'darwin') {
      if (Array.isArray(network)) proxy = await startProxy(network, { loopback: true });
      const port = proxy ? Number(proxy.address.split(':')[1]) : 0;
      const net =
        network === 'on'
          ? { mode: 'on' as const }
          : proxy
            ? { mode: 'proxy' as const, port }
            : { mode: 'off' as const };
      const proxied = proxy ? proxyEnv(`http://${proxy.address}`) : {};
      return {
        kind: 'sandboxed',
        prefix: [SANDBOX_EXEC, ...seatbeltArgs(fs, net)],
        env: { ...env, ...proxied, TMPDIR: fs.tmp },
        close,
        network,
      };
    }
    const isRoot = process.getuid?.() === 0;
    if (Array.isArray(network)) {
      proxy = await startProxy(network, {
        socket: join(sandboxRoot(), `proxy-${randomBytes(6).toString('hex')}.sock`),
      });
      const args = bwrapArgs(fs, { mode: 'proxy', socket: proxy.address }, isRoot);
      return {
        kind: 'sandboxed',
        prefix: [bwrapPath(), ...args, process.execPath, bridgeScript, INNER_PROXY_SOCKET],
        env,
        close,
        network,
      };
    }
    return {
      kind: 'sandboxed',
      prefix: [bwrapPath(), ...bwrapArgs(fs, { mode: network }, isRoot)],
      env,
      close,
      network,
    };
  } catch (err) {
    close();
    return {
      kind: 'refused',
      reason: `Not run: the sandbox could not be prepared: ${(err as Error).message}`,
    };
  }
}

function proxyEnv(url: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'http_proxy',
    'https_proxy',
    'npm_config_proxy',
    'npm_config_https_proxy',
  ])
    out[k] = url;
  return out;
}

/** Messages that usually mean a command ran into the sandbox's walls. */
const WALLS: Array<[RegExp, string, 'fs' | 'net']> = [
  [/Read-only file system/i, 'it tried to write outside the writable folders', 'fs'],
  [
    /Could not resolve host|Temporary failure in name resolution|getaddrinfo E(AI_AGAIN|NOTFOUND)|Network is unreachable|ENETUNREACH/i,
    "the session's network is off or limited to a host list",
    'net',
  ],
  [
    /svc sandbox: \S+ is not on this session's network list/,
    "the host is not on the session's network list",
    'net',
  ],
];

/** A hint for the model when a sandboxed command failed on the walls, or undefined. */
export function wallHint(
  output: string,
  origin: TurnOrigin | undefined,
  network: NetworkSetting,
): string | undefined {
  const hit = WALLS.find(([re, , kind]) => re.test(output) && (kind === 'fs' || network !== 'on'));
  if (!hit) return undefined;
  if (origin !== undefined && UNATTENDED.has(origin))
    return `[this may have hit the sandbox (${hit[1]}); ${origin} turns cannot step outside it.]`;
  return `[this may have hit the sandbox (${hit[1]}). If it really needs more, call terminal again with outside_sandbox: "<what it must reach and why>"; the user is asked first.]`;
}
