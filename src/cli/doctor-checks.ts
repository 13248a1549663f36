import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../shared/config/load.js';
import { chooseEngine, loadUws } from '../shared/engine-choice.js';
import { describeEngine } from '../shared/runtime.js';
import type { Config } from '../shared/config/schema.js';
import { parseServeEnv } from '../shared/config/serve-env.js';
import { isLoopbackBind, parseListenAddr, type ListenAddr } from '../shared/net/addr.js';
import type { Paths } from '../shared/paths.js';
import { Database, type SqliteDatabase } from '../shared/store/sqlite.js';
import { probeModel } from '../shared/providers/probe.js';
import { resolveModel } from '../shared/providers/resolve.js';
import { migrations } from '../shared/store/migrations.js';
import { version } from '../shared/version.js';
import { releasesUrl } from '../shared/upgrade/releases.js';
import { isDevBuild } from '../shared/upgrade/semver.js';
import { checkKeyShape } from '../supervisor/access-key.js';
import { assertPortFree } from '../supervisor/port-check.js';
import { DEFAULT_ADDR } from '../supervisor/settings.js';
import { inspectService, lingerAdvice, runTool } from './service.js';
import { defaultManager } from './service-files.js';

/** The checks behind `svc doctor`. A check that cannot decide says warn and why: never a false fail. */

export interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  fix?: string;
  /** What `--fix` may do about it, safely and without asking. */
  repair?: () => string;
}

export interface Context {
  paths: Paths;
  /** The running supervisor's status as it sent it (fields this CLI does not know included), if one runs. */
  running: Record<string, unknown> | undefined;
  config: Config | ConfigError;
  modelTimeoutMs: number;
}

const ok = (id: string, message: string): Check => ({ id, status: 'ok', message });
const warn = (id: string, message: string, fix?: string): Check => ({
  id,
  status: 'warn',
  message,
  fix,
});
const fail = (id: string, message: string, fix?: string): Check => ({
  id,
  status: 'fail',
  message,
  fix,
});

export function checkNode(ctx: Context): Check {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20)
    return fail(
      'node',
      `Node ${process.versions.node} is too old; svc needs Node 20 or newer`,
      'install Node 20 or newer and reinstall svc with it',
    );
  let engine: string;
  try {
    engine = ctx.running
      ? `${runningEngine(ctx.running)} (the running server's)`
      : wouldUseEngine();
  } catch (err) {
    return fail(
      'node',
      `Node ${process.versions.node}; no HTTP engine can serve: ${(err as Error).message}`,
      'unset SVC_HTTP_ENGINE (or set it to node)',
    );
  }
  return ok('node', `Node ${process.versions.node}; HTTP engine: ${engine}`);
}

/** The engine the running server reports (`engine`; older servers said only `uws`). */
function runningEngine(status: Record<string, unknown>): string {
  const engine = z.object({ engine: z.enum(['uws', 'node']) }).safeParse(status);
  if (engine.success) return describeEngine(engine.data.engine);
  const uws = z.object({ uws: z.literal('native') }).safeParse(status);
  return uws.success ? describeEngine('uws') : 'not reported';
}

/** The gateway's own rule, run here: what `svc serve` would pick on this Node. */
function wouldUseEngine(): string {
  const name = chooseEngine(); // throws when SVC_HTTP_ENGINE forces one that cannot run
  if (process.env.SVC_HTTP_ENGINE?.trim())
    return `${describeEngine(name)} would serve (forced by SVC_HTTP_ENGINE)`;
  const uws = loadUws();
  return `${describeEngine(name)} would serve (${'error' in uws ? uws.error : 'its binary loads on this Node'})`;
}

export async function checkSandbox(): Promise<Check> {
  if (process.platform === 'darwin') {
    const r = await runTool('sandbox-exec', ['-p', '(version 1)(allow default)', '/usr/bin/true']);
    return r.ok
      ? ok('sandbox', 'sandbox-exec works: terminal commands run sandboxed')
      : warn(
          'sandbox',
          `sandbox-exec cannot start (${r.why}); terminal commands run without an OS sandbox`,
        );
  }
  if (process.platform !== 'linux')
    return warn(
      'sandbox',
      `no OS sandbox on ${process.platform}; terminal commands run without one`,
    );
  const r = await runTool('bwrap', [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--unshare-pid',
    'true',
  ]);
  if (r.ok) return ok('sandbox', 'bubblewrap (bwrap) works: terminal commands can run sandboxed');
  if (r.missing)
    return warn(
      'sandbox',
      'bubblewrap (bwrap) is not installed, so terminal commands run without an OS sandbox',
      'install it (Debian/Ubuntu: sudo apt install bubblewrap)',
    );
  return warn(
    'sandbox',
    `bwrap is installed but cannot start a sandbox here (${r.why}); terminal commands run without one`,
    'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor userns rule), or run svc where they are allowed',
  );
}

/** svc's private folders and files: 0700 and 0600, owned by this user. `--fix` tightens modes. */
export function checkModes(ctx: Context): Check[] {
  const { paths } = ctx;
  if (!existsSync(paths.home))
    return [ok('home', `${paths.home} does not exist yet; "svc serve" creates it (0700)`)];
  const targets: { path: string; dir: boolean }[] = [{ path: paths.home, dir: true }];
  for (const f of [
    paths.config,
    paths.accessKey,
    paths.serveEnv,
    paths.permissions,
    paths.db,
    `${paths.db}-wal`,
    `${paths.db}-shm`,
  ])
    targets.push({ path: f, dir: false });
  for (const d of [paths.runDir, paths.logsDir]) {
    targets.push({ path: d, dir: true });
    for (const name of listDir(d)) targets.push({ path: join(d, name), dir: false });
  }
  const uid = process.getuid?.();
  const loose: { path: string; mode: number; want: number }[] = [];
  const foreign: string[] = [];
  for (const t of targets) {
    let st;
    try {
      st = statSync(t.path);
    } catch {
      continue;
    }
    if (uid !== undefined && st.uid !== uid) foreign.push(`${t.path} (uid ${st.uid})`);
    if (st.isSocket()) continue; // the control socket is 0600 by its own chmod; a stale one is the pid check's
    const mode = st.mode & 0o777;
    if (mode & 0o077) loose.push({ path: t.path, mode, want: t.dir ? 0o700 : 0o600 });
  }
  const checks: Check[] = [];
  if (foreign.length > 0)
    checks.push(
      fail(
        'home-owner',
        `owned by another user: ${foreign.join(', ')}`,
        `give them back to you: sudo chown -R ${process.env.USER ?? '$USER'} ${paths.home}`,
      ),
    );
  if (loose.length === 0)
    checks.push(ok('home', `${paths.home}: the folder and svc's files are private (0700/0600)`));
  else {
    const list = loose.map((l) => `${l.path} is ${l.mode.toString(8)}`).join(', ');
    checks.push({
      ...fail(
        'home',
        `other users can read or change svc's files: ${list}`,
        `svc doctor --fix (or chmod ${loose.map((l) => `${l.want.toString(8)} ${l.path}`).join('; chmod ')})`,
      ),
      repair: () => {
        for (const l of loose) chmodSync(l.path, l.want);
        return `tightened ${loose.map((l) => `${l.path} to ${l.want.toString(8)}`).join(', ')}`;
      },
    });
  }
  return checks;
}

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

export function checkDisk(ctx: Context): Check {
  let dir = ctx.paths.home;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  let free: number;
  try {
    const st = statfsSync(dir);
    free = st.bavail * st.bsize;
  } catch (err) {
    return warn('disk', `cannot read the free space of ${dir}: ${(err as Error).message}`);
  }
  const text =
    free >= 2 ** 30 ? `${(free / 2 ** 30).toFixed(1)} GiB` : `${Math.round(free / 2 ** 20)} MiB`;
  if (free < 100 * 2 ** 20)
    return fail(
      'disk',
      `only ${text} free for ${ctx.paths.home}; writes to svc.db and uploads will fail`,
      'free some space on that disk (svc trash can be emptied in the Web UI)',
    );
  if (free < 2 ** 30)
    return warn(
      'disk',
      `${text} free for ${ctx.paths.home}; uploads and the database may run out soon`,
      'free some space on that disk',
    );
  return ok('disk', `${text} free for ${ctx.paths.home}`);
}

export function checkDatabase(ctx: Context): Check {
  const file = ctx.paths.db;
  if (!existsSync(file)) return ok('database', 'svc.db does not exist yet; "svc serve" creates it');
  const known = Math.max(...migrations.map((m) => m.version));
  const damaged = (why: string) =>
    fail(
      'database',
      `svc.db is damaged: ${why}`,
      `stop svc, keep a copy of ${file}, then restore it from a backup (or move it aside to start with an empty store)`,
    );
  let db: SqliteDatabase | undefined;
  try {
    // read-write (nothing is written) so closing cleans up the WAL files a read-only open would leave
    db = new Database(file, { fileMustExist: true });
    db.pragma('busy_timeout = 3000');
    const rows = z.array(z.object({ quick_check: z.string() })).parse(db.pragma('quick_check'));
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (problems.length > 0) return damaged(problems.slice(0, 3).join('; '));
    const hasTable =
      db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        .get() !== undefined;
    if (!hasTable)
      return warn(
        'database',
        'svc.db passes its integrity check but has no schema table: it was not made by svc, or never finished its first start',
        `move ${file} aside if svc serve refuses it`,
      );
    const { v } = z
      .object({ v: z.number().nullable() })
      .parse(db.prepare('SELECT max(version) AS v FROM schema_migrations').get());
    const have = v ?? 0;
    if (have > known)
      return fail(
        'database',
        `svc.db has schema version ${have}, made by a newer svc than this one (which knows ${known})`,
        'run the newer svc, or restore a backup made for this version',
      );
    if (have < known)
      return ok(
        'database',
        `svc.db passes quick_check; schema version ${have}, which "svc serve" brings to ${known} at its next start`,
      );
    return ok('database', `svc.db passes quick_check; schema version ${have} (current)`);
  } catch (err) {
    const e = err as { code?: string; message: string };
    if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED')
      return warn(
        'database',
        `svc.db is busy and could not be checked: ${e.message}`,
        'run svc doctor again in a moment',
      );
    if (e.code === 'SQLITE_CANTOPEN' || e.code === 'SQLITE_PERM' || e.code === 'SQLITE_READONLY')
      return warn(
        'database',
        `svc.db could not be opened to check it: ${e.message}`,
        `check the owner and modes of ${file} and its folder`,
      );
    if (typeof e.code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(e.code))
      return damaged(e.message);
    return warn('database', `svc.db could not be checked: ${e.message}`);
  } finally {
    db?.close();
  }
}

export function checkConfig(ctx: Context): Check[] {
  const { paths, config } = ctx;
  const checks: Check[] = [];
  if (config instanceof ConfigError)
    checks.push(
      fail(
        'config',
        config.message.split('\n').join('; '),
        `edit ${paths.config}; a running svc keeps its last good configuration until then`,
      ),
    );
  else if (!existsSync(paths.config))
    checks.push(ok('config', 'no config.yml yet: the defaults apply'));
  else
    checks.push(
      ok(
        'config',
        `config.yml is valid (${Object.keys(config.models).length} model${Object.keys(config.models).length === 1 ? '' : 's'})`,
      ),
    );
  let envText: string | undefined;
  try {
    envText = readFileSync(paths.serveEnv, 'utf8');
  } catch {
    // no serve.env
  }
  const bad = envText === undefined ? [] : parseServeEnv(envText).bad;
  if (bad.length > 0)
    checks.push(
      warn(
        'serve-env',
        `serve.env lines ${bad.join(', ')} are not KEY=VALUE and are skipped`,
        `edit ${paths.serveEnv}`,
      ),
    );
  return checks;
}

/** Each model entry with the same probe as /api/config/test, in parallel, with a short deadline. */
export async function checkModels(ctx: Context): Promise<Check[]> {
  const { config } = ctx;
  if (config instanceof ConfigError)
    return [warn('models', 'not checked: config.yml is not valid', 'fix config.yml first')];
  const entries = Object.entries(config.models);
  if (entries.length === 0)
    return [
      warn(
        'models',
        'no model is configured, so svc cannot answer chats',
        'add one in the Web UI (Settings → Models) or under models: in config.yml',
      ),
    ];
  const checks = await Promise.all(
    entries.map(async ([id, entry]): Promise<Check> => {
      const name = `model ${id}`;
      const what = `${entry.provider}/${entry.model}`;
      const r = resolveModel(entry);
      if (!r.base_url)
        return fail(name, `${what} has no address`, `set models.${id}.base_url in config.yml`);
      const started = Date.now();
      const result = await probeModel(
        {
          protocol: r.protocol,
          baseUrl: r.base_url,
          apiKey: r.api_key,
          providerId: entry.provider,
        },
        entry.model,
        { timeoutMs: ctx.modelTimeoutMs },
      );
      if (result.ok) return ok(name, `${what} answered in ${result.latency_ms} ms`);
      const timedOut = Date.now() - started >= ctx.modelTimeoutMs;
      switch (result.reason) {
        case 'bad_key':
          return fail(
            name,
            `${what}: the provider refused the key: ${result.message}`,
            r.api_key
              ? `set a valid key for ${id} in the Web UI or config.yml`
              : `no key is set: give ${id} an api_key${r.api_key_source === null ? " (or the provider's key variable in serve.env)" : ''}`,
          );
        case 'unknown_model':
          return fail(
            name,
            `${what}: the provider does not know this model: ${result.message}`,
            `pick a model the provider lists (Web UI → Settings → Models)`,
          );
        case 'unreachable':
          if (timedOut)
            return warn(
              name,
              `${what} did not answer within ${ctx.modelTimeoutMs / 1000} s: slow, or unreachable from here`,
              `check ${r.base_url} from this machine; svc waits longer than this for real turns`,
            );
          return fail(
            name,
            `${what} cannot be reached: ${result.message}`,
            `check ${r.base_url}, this machine's network and any proxy`,
          );
        default:
          // rate limits, provider-side errors and odd answers say little about the setup itself
          return warn(
            name,
            `${what} answered, but not as expected (${result.reason}): ${result.message}`,
            "try again later; if it persists, check the provider's status",
          );
      }
    }),
  );
  if (config.slots.default === undefined)
    checks.push(
      warn(
        'models',
        'no model is in the default slot, so chats have no model',
        'choose one in the Web UI or set slots.default in config.yml',
      ),
    );
  return checks;
}

/** Where svc listens, whether clients there need the key, and whether that key is usable. */
export async function checkAddress(ctx: Context): Promise<Check[]> {
  const { paths, config, running } = ctx;
  const runningAddr = running ? z.object({ addr: z.string() }).safeParse(running) : undefined;
  let listen: ListenAddr;
  let text: string;
  try {
    text = runningAddr?.success
      ? runningAddr.data.addr
      : config instanceof ConfigError
        ? DEFAULT_ADDR
        : (config.addr ?? DEFAULT_ADDR);
    listen = parseListenAddr(text);
  } catch (err) {
    return [
      fail(
        'address',
        `${paths.config}: addr: ${(err as Error).message}`,
        'fix addr in config.yml, or pass --addr',
      ),
    ];
  }
  const checks: Check[] = [];
  const where = listen.host === '' ? `every interface, port ${listen.port}` : text;
  if (isLoopbackBind(listen))
    checks.push(
      ok(
        'address',
        `${running ? 'listens' : 'would listen'} on ${where}: only this machine can connect, and local clients need no key`,
      ),
    );
  else
    checks.push(
      warn(
        'address',
        `${running ? 'listens' : 'would listen'} on ${where}: other machines can connect; they need the access key, and plain HTTP can be read on the way`,
        'reach it through a VPN or TLS proxy; "svc key show" prints the sign-in address',
      ),
    );
  if (!running && listen.port !== 0) {
    const busy = await assertPortFree(listen).then(
      () => undefined,
      (err: Error) => err.message,
    );
    if (busy)
      checks.push(
        warn(
          'port',
          `${busy}; "svc serve" would not start there`,
          'stop that program, or give svc another --addr',
        ),
      );
  }
  checks.push(checkKey(ctx));
  return checks;
}

function checkKey(ctx: Context): Check {
  const { paths, config } = ctx;
  try {
    if (process.env.SVC_ACCESS_KEY) {
      checkKeyShape(process.env.SVC_ACCESS_KEY, 'SVC_ACCESS_KEY');
      return ok('key', 'the access key comes from SVC_ACCESS_KEY');
    }
    if (!(config instanceof ConfigError) && config.access_key !== undefined)
      return ok('key', 'the access key comes from access_key in config.yml');
    if (!existsSync(paths.accessKey))
      return ok('key', `no access key yet; "svc serve" generates one in ${paths.accessKey}`);
    checkKeyShape(readFileSync(paths.accessKey, 'utf8').trim(), paths.accessKey);
    return ok('key', `the access key is in ${paths.accessKey} ("svc key show" prints it)`);
  } catch (err) {
    return fail(
      'key',
      `${(err as Error).message}; svc serve will refuse to start`,
      `"svc key rotate" writes a new key file (or fix the value)`,
    );
  }
}

export async function checkService(ctx: Context): Promise<Check[]> {
  const manager = defaultManager();
  if (!manager)
    return [
      ok(
        'service',
        `no service manager support on ${process.platform}; run "svc serve -d" instead`,
      ),
    ];
  const s = await inspectService(ctx.paths, manager);
  if (!s.installed)
    return [
      ok(
        'service',
        `no ${manager} service is installed ("svc service install" keeps svc running across logouts and reboots)`,
      ),
    ];
  const checks: Check[] = [];
  if (s.matches_this_install === false)
    checks.push(
      warn(
        'service',
        `${s.file} runs ${s.runs?.node ?? '?'} ${s.runs?.bin ?? '?'} with SVC_HOME=${s.runs?.home ?? '?'}, not this svc`,
        'svc service install (rewrites it for this Node, install and SVC_HOME)',
      ),
    );
  if (s.active === null)
    checks.push(
      warn(
        'service',
        `${s.file} is installed, but its state is unknown: ${s.manager_note ?? 'the service manager did not answer'}`,
        manager === 'systemd' ? 'systemctl --user status svc' : undefined,
      ),
    );
  else if (s.active !== 'active' && s.active !== 'running')
    checks.push(
      warn(
        'service',
        `the ${manager} service is ${s.active}${s.enabled ? ` (${s.enabled})` : ''}`,
        manager === 'systemd'
          ? 'systemctl --user start svc; journalctl --user -u svc shows why it stopped'
          : 'svc service install',
      ),
    );
  else if (s.matches_this_install !== false)
    checks.push(
      ok('service', `the ${manager} service is ${s.active}${s.enabled ? ` and ${s.enabled}` : ''}`),
    );
  if (s.linger === 'no') checks.push(warn('linger', lingerAdvice()));
  return checks;
}

/** Where newer releases would come from; the network is left to `svc upgrade --check` (doctor stays fast offline). */
export function checkRelease(ctx: Context): Check {
  if (isDevBuild(version))
    return ok('release', `svc ${version} is a development build; it is never offered an update`);
  if (ctx.config instanceof ConfigError)
    return warn(
      'release',
      `svc ${version}; where releases come from is unknown while config.yml is broken`,
      'fix config.yml (see the config check above)',
    );
  let url: string;
  try {
    url = releasesUrl(ctx.config);
  } catch (err) {
    return warn(
      'release',
      `svc ${version}; ${(err as Error).message}`,
      'set upgrade.releases_url (or SVC_RELEASES_URL) to an https:// releases API',
    );
  }
  if (!ctx.config.upgrade.check || process.env.SVC_UPGRADE_CHECK === '0')
    return ok(
      'release',
      `svc ${version}; the automatic check for newer releases is off (svc upgrade --check looks now)`,
    );
  return ok(
    'release',
    `svc ${version}; svc serve looks for newer releases at ${url} every 12 hours (svc upgrade --check looks now)`,
  );
}

/** Loads config.yml as the supervisor would, keeping the error to report it. */
export function readConfig(paths: Paths): Config | ConfigError {
  try {
    return loadConfig(paths.config);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    return new ConfigError((err as Error).message);
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
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
