import type { Config } from '../shared/config/schema.js';
import type { ChildRole } from '../shared/protocol/ipc.js';

/**
 * The table of roles: how the supervisor knows each child process. A new role is a folder under
 * src/workers, its name in `roles` (shared/protocol/ipc.ts) and one entry here. Kept free of runtime imports: `svc serve` reads it before it
 * loads the supervisor (to fork the gateway early).
 */
/** The names are declared once, in the IPC protocol's `roles`; every one needs an entry below. */
export type ChildRoleName = ChildRole;

/** What the store says when a role is wanted (read by the supervisor; kept as plain answers so this file imports nothing). */
export interface StoreFacts {
  /** An enabled cron task exists, or a cron run is still going. */
  cronWork: () => boolean;
}

export interface RoleSpec {
  /** The entry file, relative to the code root (dist/src, or dist/bundle when bundled: shared/code-root.ts). */
  entry: string;
  /**
   * How many: `one` process while `wanted`; `pool` grows on demand (agent workers, up to
   * agent.max_workers). The gateway is `one` with its own port handover on restart.
   */
  count: 'one' | 'pool';
  /** Whether the role should run, given the config and the store (checked at start, on every config change, and when a cron task changes). */
  wanted: (config: Config, store: StoreFacts) => boolean;
  /** After an unexpected exit: `backoff` starts it again (with backoff, crash loops reported); `on_demand` waits for work. */
  restart: 'backoff' | 'on_demand';
  /** Sent `config.changed` when config.yml changes through the API. */
  wantsConfig: boolean;
  /** A request addressed to the role starts it even while not `wanted` (it stops again once idle). */
  onDemand?: boolean;
  /** Receives every `session:*` /ws event (the channels worker streams chats' turns to their platform). */
  followsSessions?: boolean;
  /** V8 flags the process starts with. */
  v8Flags?: readonly string[];
}

/**
 * V8 flags of the supervisor where svc writes its command line (`svc serve -d`, the service files):
 * it routes every turn's events, and V8's default young generation grows to 16 MB and stays
 * (9-11 MiB more resident after one turn with every role running; bench/RESULTS.md, issue 37).
 * A foreground `svc serve` runs with what Node was given: V8 reads the flag only at start.
 */
export const SUPERVISOR_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** `execArgv` with the supervisor's flags added where not given already. */
export function withSupervisorFlags(execArgv: readonly string[]): string[] {
  const given = (f: string) => execArgv.some((a) => a.split('=')[0] === f.split('=')[0]);
  return [...SUPERVISOR_V8_FLAGS.filter((f) => !given(f)), ...execArgv];
}

/**
 * V8 flags of the workers (bench/RESULTS.md, issue 37, has what each one saves): a 1 MB young
 * generation (the default grows to 16 MB under a burst of turns and keeps it), and `gc` for
 * shared/idle-gc.ts, which collects once a worker goes quiet.
 */
const WORKER_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--expose-gc'];

export const roleSpecs: Readonly<Record<ChildRoleName, RoleSpec>> = {
  gateway: {
    entry: 'gateway/main.js',
    count: 'one',
    wanted: () => true,
    restart: 'backoff',
    wantsConfig: true,
    /**
     * A 1 MB young generation (V8's default grows to 16 MB while the modules load and keeps it):
     * about 7 MB less resident at idle. A request allocates little (the gateway's request path is
     * allocation-free), so scavenges stay rare; bench/RESULTS.md has the throughput beside it.
     */
    v8Flags: ['--max-semi-space-size=1', '--expose-gc'], // --expose-gc: shared/idle-gc.ts
  },
  agent: {
    entry: 'workers/agent/main.js',
    count: 'pool',
    wanted: () => true,
    restart: 'on_demand',
    wantsConfig: true,
    /**
     * WASM (the bash grammar, RE2) compiled by Liftoff alone: TurboFan's tier-up of the grammar
     * left about 30 MB of compiler memory in malloc arenas that never went back; the parse is as
     * fast (bench/RESULTS.md, issue 37).
     */
    v8Flags: [...WORKER_V8_FLAGS, '--liftoff-only'],
  },
  /** Messaging-platform adapters; only while a channel is enabled. */
  channels: {
    entry: 'workers/channels/main.js',
    count: 'one',
    wanted: (c) => Object.values(c.channels).some((p) => p?.enabled === true),
    restart: 'backoff',
    wantsConfig: true,
    v8Flags: WORKER_V8_FLAGS,
    followsSessions: true,
  },
  /** Schedules: only while an enabled cron task exists (or a run of one is going) or backups are scheduled. */
  cron: {
    entry: 'workers/cron/main.js',
    count: 'one',
    wanted: (c, store) => store.cronWork() || c.backup.schedule !== undefined,
    restart: 'backoff',
    wantsConfig: true,
    v8Flags: WORKER_V8_FLAGS,
    onDemand: true,
  },
  /** MCP clients, shared by every agent worker; only while an enabled server is configured. */
  mcp: {
    entry: 'workers/mcp/main.js',
    count: 'one',
    wanted: (c) => Object.values(c.mcp.servers).some((s) => s.enabled),
    restart: 'backoff',
    wantsConfig: true,
    v8Flags: WORKER_V8_FLAGS,
  },
  /**
   * The CDP connection (and a Chromium of its own under `launch: auto`), shared by every agent
   * worker; while a browser is configured, or started on demand by a verify or a browser call.
   */
  browser: {
    entry: 'workers/browser/main.js',
    count: 'one',
    wanted: (c) =>
      c.browser.cdp_url !== undefined ||
      c.browser.port !== undefined ||
      c.browser.launch !== undefined,
    restart: 'backoff',
    wantsConfig: true,
    onDemand: true,
  },
};

/** The roles the supervisor starts and stops by `wanted` alone (the gateway and the agent pool have their own code). */
export const serviceRoles = (Object.keys(roleSpecs) as ChildRoleName[]).filter(
  (r) => r !== 'gateway' && roleSpecs[r].count === 'one',
);
