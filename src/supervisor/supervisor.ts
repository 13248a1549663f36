import { raiseNofile } from '../shared/fd-limit.js';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import type { Config } from '../shared/config/schema.js';
import { log, redact, setLogConsole, setLogLevel, setLogRole } from '../shared/log.js';
import { configureTelemetry } from '../shared/telemetry/trace.js';
import { formatHostPort, type ListenAddr } from '../shared/net/addr.js';
import type { Paths } from '../shared/paths.js';
import type { ChildRole, ProcessStatus, Status } from '../shared/protocol/ipc.js';
import { openAndMigrate, type Db } from '../shared/store/db.js';
import { indexState } from '../shared/store/search.js';
import { fillSearchIndex } from './search-fill.js';
import { embeddingsState, fillEmbeddings } from './search-embed.js';
import { MetaStore } from '../shared/store/meta.js';
import { failOrphanTurns } from '../shared/store/turns.js';
import { cronWorkNeeded } from '../shared/store/cron.js';
import { lastBackup } from '../shared/store/backups.js';
import { enforceTrashRetention } from '../shared/store/trash.js';
import { sandboxStatus } from '../shared/sandbox/status.js';
import { version } from '../shared/version.js';
import { assertPortFree, awaitRelaunchPort, takeRelaunchMark } from './port-check.js';
import { redactConfigSecrets } from '../shared/config/secrets.js';
import { Child } from './child-process.js';
import { takeListener } from './listener-handoff.js';
import { forkChild, type Forked } from './spawn-child.js';
import { handleConfigEdits } from './config-service.js';
import { handleMcpConfigEdits } from './mcp-config.js';
import { handleChannelConfigEdits } from './channels-config.js';
import { handleBrowserConfigEdits } from './browser-config.js';
import { handleBackupConfigEdits } from './backup-config.js';
import { handleTrashRestore } from './trash-restore.js';
import { Services } from './services.js';
import { serveControl } from './control-socket.js';
import { IpcRouter } from './ipc-router.js';
import { LogSink } from './log-sink.js';
import { TurnDispatcher } from './turns.js';
import { AgentPool } from './agent-pool.js';
import { handleCronSignals } from './cron-signals.js';
import { ExitLog } from './exit-log.js';
import { GatewaySlot } from './gateway-slot.js';
import { roleSpecs } from './roles.js';
import { childStatus, supervisorStatus } from './status.js';
import { Liveness } from './liveness.js';
import { effectiveCors, readSettings, type Settings } from './settings.js';
import { VersionCheck } from './version-check.js';
import { UpgradeRunner } from './upgrade-runner.js';
import { startFromRecord, serveArgs, writeRelaunch } from '../shared/upgrade/relaunch.js';
import type { Publish } from '../shared/protocol/events.js';
import { typedPublish } from '../shared/ws-publish.js';

const STOP_GRACE_MS = 5000;
const DAY_MS = 24 * 3600 * 1000;

export interface ServeFlags {
  addr?: string;
  accessKey?: string;
  cors: string[];
}

/**
 * The supervisor: owns config and key, runs migrations, spawns and watches the children, routes
 * IPC between them, drains and replaces them on restart, and answers `svc status`.
 */
export class Supervisor {
  private settings!: Settings;
  private db!: Db;
  private control: Server | undefined;
  private readonly exits = new ExitLog();
  private readonly gateway = new GatewaySlot({
    spawn: (forked) => this.spawn('gateway', forked),
    startWith: () => ({
      config: this.settings.config,
      access_key: this.settings.key,
      listen: { host: this.settings.listen.host, port: this.settings.listen.port },
      started_at: this.startedAt.getTime(),
    }),
    serving: () => this.router.release(),
    stopping: () => this.state === 'stopping',
    exits: this.exits,
  });
  private readonly router = new IpcRouter(
    (role) => this.pick(role),
    (e, from) => this.toSessionFollowers(e, from),
  );
  private state: Status['state'] = 'starting';
  private readonly startedAt = new Date();
  private restarts = 0;
  private lastRestartError: string | null = null;
  private restartInFlight: Promise<void> | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  private searchFill: { stop: () => void } | undefined;
  private embedFill: { stop: () => void } | undefined;
  private readonly agents = new AgentPool({
    spawn: () => this.spawn('agent'),
    config: () => this.settings.config,
    turnsOn: (a) => this.turns.turnsOn(a),
    accepting: () => this.state === 'running',
    stopGraceMs: STOP_GRACE_MS,
  });
  private turns!: TurnDispatcher;
  /** The roles the role table alone starts and stops (mcp, channels, cron, browser). */
  private readonly services = new Services({
    spawn: (role) => this.spawn(role),
    config: () => this.settings.config,
    store: { cronWork: () => cronWorkNeeded(this.db) },
    running: () => this.state !== 'stopping',
    exits: this.exits,
  });
  private logs: LogSink | undefined;
  /** Pings every child; one that stops answering is killed and replaced. */
  private readonly liveness = new Liveness({
    children: () => this.children(),
    bounds: () => ({
      pingMs: this.settings.config.liveness.ping_seconds * 1000,
      timeoutMs: this.settings.config.liveness.timeout_seconds * 1000,
    }),
    unresponsive: (child, silentMs) =>
      this.killHung(child, `it answered no liveness ping for ${(silentMs / 1000).toFixed(1)} s`),
  });
  /** The automatic version check, `svc upgrade` run for the Web UI, and the replacement by a new version. */
  private readonly versionCheck = new VersionCheck(
    () => this.settings.config,
    () => this.upgrades.running,
    (info) => this.publish('server', 'version', info),
  );
  private readonly upgrades: UpgradeRunner;
  private replacing = false;

  constructor(
    private readonly paths: Paths,
    private readonly flags: ServeFlags,
    /** A gateway `svc serve` forked before loading the supervisor, to halve the cold start. */
    private preforked?: Forked,
  ) {
    this.upgrades = new UpgradeRunner(paths.home, (p) => this.publish('server', 'upgrade', p));
  }

  get url(): string | null {
    if (this.gateway.port === undefined) return null;
    const host = this.settings.listen.host === '' ? '127.0.0.1' : this.settings.listen.host;
    return `http://${formatHostPort(host, this.gateway.port)}/`;
  }

  get accessKey(): string {
    return this.settings.key;
  }

  get listen(): ListenAddr {
    return this.settings.listen;
  }

  /** Starts everything; rejects with a one-line reason if svc cannot start. */
  async start(): Promise<{ port: number; engine: 'uws' | 'node' }> {
    process.umask(0o077); // everything svc writes is the user's alone
    setLogRole('supervisor');
    ensurePrivateDir(this.paths.home);
    this.settings = readSettings(this.paths, this.flags);
    this.applyLogSettings(this.settings.config);
    // Loaded (when configured) before the gateway can hand over a turn to trace.
    await configureTelemetry(this.settings.config.telemetry, 'supervisor');
    mkdirSync(this.paths.runDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.paths.logsDir, { recursive: true, mode: 0o700 });
    this.logs = new LogSink(
      this.paths.logsDir,
      this.settings.config.log,
      process.env.SVC_DAEMONIZED !== '1',
    );
    if (process.env.SVC_DAEMONIZED === '1') setLogConsole(false);
    // A relaunch (an upgrade or a rollback) takes back the port it had a moment ago, which
    // another program's connection may hold for now (port-check.ts): it waits for it just before
    // the gateway binds. A first start fails at once, before it touches the store.
    const relaunched = takeRelaunchMark();
    if (!relaunched) await assertPortFree(this.settings.listen);
    // Before any child is forked, so every role inherits the raised descriptor limit.
    const nofile = raiseNofile();
    log.info(
      nofile.note,
      nofile.limit ? { soft: nofile.limit.soft, hard: nofile.limit.hard } : undefined,
    );
    const { db, applied } = openAndMigrate(this.paths.db);
    this.db = db;
    if (applied.length > 0) log.info('store migrated', { versions: applied.join(',') });
    new MetaStore(db).set('last_start', this.startedAt.toISOString());
    const orphans = failOrphanTurns(db, 'svc stopped while this turn ran');
    if (orphans > 0)
      log.warn('turns left running by an earlier svc were recorded as failed', { turns: orphans });
    this.turns = new TurnDispatcher({
      db,
      agentForTurn: () => this.agents.pick(true),
      killWorker: (agent, why) => this.killHung(agent, why),
      accepting: () => this.state === 'running',
      retryAfterS: () => this.retryAfterS(),
      maxContinuations: () => this.settings.config.agent.max_continuations,
      publish: this.publish,
      ended: (e) => this.services.get('cron')?.endpoint.emit('turn.ended', e),
    });
    this.agents.start();
    this.enforceRetention();
    this.searchFill = fillSearchIndex(db);
    this.embedFill = fillEmbeddings(db, () => this.settings.config);
    this.retentionTimer = setInterval(() => this.enforceRetention(), DAY_MS);
    this.retentionTimer.unref();

    this.control = await serveControl(this.paths.controlSocket, async (req) => {
      if (req.cmd === 'status') return this.status();
      if (req.cmd === 'open_url')
        return { url: this.url, key: this.settings.key, key_source: this.settings.keySource };
      if (req.cmd === 'restart') return this.requestRestart('asked from the command line');
      if (req.cmd === 'replace') return this.requestReplace();
      setImmediate(() => process.kill(process.pid, 'SIGTERM')); // the same path as Ctrl-C
      return { stopping: true };
    });
    writeFileSync(this.paths.pidFile, `${process.pid}\n`, { mode: 0o600 });

    const early = this.preforked;
    this.preforked = undefined;
    if (relaunched) await awaitRelaunchPort(this.settings.listen);
    const gateway = await this.gateway.start(this.settings.listen.port, early);
    this.state = 'running';
    this.services.sync();
    this.liveness.start();
    this.versionCheck.sync();
    return gateway;
  }

  /** Stops every child, then removes the socket and pid file. */
  async stop(reason: string): Promise<void> {
    this.preforked?.proc.kill('SIGKILL'); // a start that failed before adopting it
    if (this.state === 'stopping') return;
    // A start that failed has already said why in one line; "stopping" would only be noise after it.
    if (this.state !== 'starting') log.info('stopping', { reason });
    this.state = 'stopping';
    this.gateway.stop();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.searchFill?.stop();
    this.embedFill?.stop();
    this.liveness.stop();
    this.versionCheck.stop();
    await Promise.all([
      this.gateway.child?.stop(STOP_GRACE_MS),
      this.agents.stop(),
      this.services.stop(STOP_GRACE_MS),
    ]);
    this.control?.close();
    rmSync(this.paths.controlSocket, { force: true });
    rmSync(this.paths.pidFile, { force: true });
    this.db?.close();
    this.logs?.close();
  }

  async status(): Promise<Status> {
    // Taken together, before any wait: a gateway whose start ends meanwhile is in one or the other.
    const children = this.children();
    const serves = this.gateway.serves;
    const pending = this.gateway.pendingStatus();
    const processes: ProcessStatus[] = [
      supervisorStatus(this.state, this.startedAt),
      ...(await Promise.all(children.map((c) => childStatus(c, this.exits)))),
    ];
    // Beside the serving gateway (first after the supervisor), or in its place while none serves.
    if (pending) processes.splice(serves ? 2 : 1, 0, pending);
    processes.push(...this.services.waiting());
    const port = this.gateway.port;
    return {
      version,
      // Running with no gateway serves nobody: say so rather than "running".
      state: !serves && this.state === 'running' ? 'degraded' : this.state,
      started_at: this.startedAt.toISOString(),
      home: this.paths.home,
      addr:
        port === undefined ? null : formatHostPort(this.settings.listen.host || '0.0.0.0', port),
      url: this.url,
      uws: this.gateway.uws,
      engine: this.gateway.engine,
      restarts: this.restarts,
      last_restart_error: this.lastRestartError,
      processes,
      sandbox: await sandboxStatus(this.settings.config.sandbox.enabled),
      backup: {
        schedule: this.settings.config.backup.schedule ?? null,
        last: lastBackup(this.db) ?? null,
      },
      search: indexState(this.db),
      semantic: embeddingsState(this.db, this.settings.config),
    };
  }

  /** Every child process running now. */
  private children(): Child[] {
    return [this.gateway.child, ...this.agents.all(), ...this.services.all()].filter(
      (c): c is Child => c !== undefined,
    );
  }

  /**
   * POST /api/restart: drain (new work gets 503), wait for in-flight turns within the drain bound,
   * re-read config and key, start a new gateway on the same port, then retire the old one.
   */
  requestRestart(reason: string): { accepted: boolean; state: string } {
    if (this.state === 'stopping') return { accepted: false, state: this.state };
    if (!this.restartInFlight) {
      this.restartInFlight = this.restart(reason).finally(() => {
        this.restartInFlight = undefined;
      });
    }
    return { accepted: true, state: 'restarting' };
  }

  private async restart(reason: string): Promise<void> {
    log.info('restart requested; draining', { reason });
    this.state = 'draining';
    const drainSeconds = this.settings.config.restart.drain_seconds;
    this.gateway.child?.endpoint.emit('server.draining', { retry_after_s: this.retryAfterS() });
    await this.turns.drain(drainSeconds * 1000, STOP_GRACE_MS);

    let next: Settings;
    try {
      next = readSettings(this.paths, this.flags, this.settings.listen);
    } catch (err) {
      this.lastRestartError = (err as Error).message;
      log.error(
        'restart abandoned: the configuration cannot be used; still running with the previous one',
        { error: this.lastRestartError },
      );
      this.gateway.child?.endpoint.emit('server.resumed', { reason: this.lastRestartError });
      this.state = 'running';
      return;
    }
    this.state = 'restarting';
    this.settings = next;
    this.applyLogSettings(next.config);
    const old = this.gateway.child;
    const oldAgents = this.agents.takeAll();
    try {
      // The new gateway goes on numbering /ws events where the old one stops, so clients resume
      // with `since`; without that (an old gateway that does not answer) they reload instead.
      const wsState = old
        ? await old.endpoint.request('gateway.ws_state', {}).catch(() => undefined)
        : undefined;
      // The old gateway keeps its socket until the new one listens on the same port (SO_REUSEPORT,
      // or the socket itself passed on where the engine cannot share a port).
      await this.gateway.start(
        this.gateway.port ?? next.listen.port,
        undefined,
        old ? await takeListener(old) : undefined,
        wsState,
      );
    } catch (err) {
      this.lastRestartError = `the new gateway did not start: ${(err as Error).message}`;
      log.error('restart abandoned', { error: this.lastRestartError });
      this.gateway.child = old;
      this.agents.adopt(oldAgents);
      old?.endpoint.emit('server.resumed', { reason: this.lastRestartError });
      this.router.release();
      this.state = 'running';
      return;
    }
    if (old) {
      old.expectedExit = true;
      await old.endpoint.request('gateway.handover', {}).catch(() => undefined);
      await old.stop(STOP_GRACE_MS);
    }
    await Promise.all(oldAgents.map((a) => a.stop(STOP_GRACE_MS)));
    for (const c of this.services.all()) c.endpoint.emit('config.changed', { config: next.config });
    this.services.sync();
    this.restarts++;
    this.lastRestartError = null;
    this.state = 'running';
    log.info('restarted', { restarts: this.restarts });
  }

  /**
   * `svc upgrade` switched the active version: drain like a restart, stop every process, then
   * start svc again from its launcher (which follows versions/current) on the address bound now.
   * Under systemd or launchd the manager starts it again instead (exit 75: Restart=on-failure,
   * KeepAlive on a failed exit), since a process it did not start would be killed with the unit.
   */
  requestReplace(): { accepted: boolean; state: string } {
    if (this.state === 'stopping' || this.replacing) return { accepted: false, state: this.state };
    this.replacing = true;
    setImmediate(() => void this.replace());
    return { accepted: true, state: 'replacing' };
  }

  private async replace(): Promise<void> {
    log.info('a new version is active; draining, then starting it');
    this.state = 'draining';
    this.gateway.child?.endpoint.emit('server.draining', { retry_after_s: this.retryAfterS() });
    await this.turns.drain(this.settings.config.restart.drain_seconds * 1000, STOP_GRACE_MS);
    const bound =
      this.gateway.port === undefined
        ? null
        : formatHostPort(this.settings.listen.host || '0.0.0.0', this.gateway.port);
    const record = {
      exec: process.execPath,
      args: [
        ...process.execArgv,
        process.argv[1] ?? 'svc',
        'serve',
        ...serveArgs(process.argv.slice(2), bound),
      ],
      daemonized: process.env.SVC_DAEMONIZED === '1',
      url: this.url,
    };
    await this.stop('replaced by the active version');
    if (underServiceManager()) {
      writeRelaunch(this.paths, record);
      process.exit(75);
    }
    const pid = startFromRecord(this.paths, record);
    writeRelaunch(this.paths, { ...record, pid });
    process.exit(0);
  }

  private retryAfterS(): number {
    return Math.max(1, Math.min(30, Math.ceil(this.settings.config.restart.drain_seconds)));
  }

  /** Starts (or adopts an already forked) child; the key reaches it over IPC only, never the environment. */
  private spawn(role: ChildRole, forked?: Forked): Child {
    const child = new Child(role, forked ?? forkChild(role, this.paths.home));
    this.router.attach(child);
    this.logs?.follow(role, child.proc.stderr);
    child.endpoint.handle('supervisor.status', () => this.status());
    child.endpoint.handle('supervisor.restart', (p) => this.requestRestart(p.reason));
    child.endpoint.handle('version.info', () => this.versionCheck.info());
    child.endpoint.handle('version.upgrade', () => this.upgrades.start());
    handleConfigEdits(
      child.endpoint,
      this.paths.config,
      () => this.settings.config,
      (config) => this.applyConfig(config),
    );
    const editCtx = {
      endpoint: child.endpoint,
      file: this.paths.config,
      db: this.db,
      paths: this.paths,
      current: () => this.settings.config,
      changed: (config: Config) => this.applyConfig(config),
    };
    handleTrashRestore(child.endpoint, this.db, this.paths, {
      ...handleMcpConfigEdits(editCtx),
      ...handleChannelConfigEdits(editCtx),
    });
    handleBrowserConfigEdits(editCtx);
    handleBackupConfigEdits(editCtx);
    child.endpoint.handle('turn.start', (p) => this.turns.start(p));
    child.endpoint.handle('turn.interrupt', (p) =>
      this.turns.interrupt(p.session_id, p.wait === true),
    );
    child.endpoint.handle('approval.answer', (p) => this.turns.answerApproval(p));
    child.endpoint.handle('approval.list', (p) => this.turns.pendingApprovals(p));
    // After the router's listener (attach, above): a turn's end event is on its way to the
    // gateway before the session is free for the next turn.
    if (role === 'agent')
      child.endpoint.onEvent((event) => {
        if (event.type === 'ws.delta') this.turns.observeDelta(event.payload);
        else if (event.type === 'ws.publish') this.turns.observe(event.payload);
      });
    handleCronSignals(child, this.services);
    void child.exited.then(({ code, signal }) => this.onExit(child, code, signal));
    return child;
  }

  /** A child that does not answer (hung, or stopped with SIGSTOP): killed, then replaced as after a crash. */
  private killHung(child: Child, why: string): void {
    if (!child.alive || child.hung) return;
    log.error(`the ${child.role} process stopped answering; killing and replacing it`, {
      pid: child.pid,
      why,
    });
    this.hungWhy.set(child, why);
    child.killUnresponsive();
  }

  private readonly hungWhy = new WeakMap<Child, string>();

  private onExit(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    const hung = this.hungWhy.get(child);
    const how = hung
      ? `killed as unresponsive (${hung})`
      : signal
        ? `killed by ${signal}`
        : `exit code ${code}`;
    if (this.services.exited(child, how)) return;
    if (child.role === 'agent') {
      this.agents.remove(child);
      this.turns.workerGone(child, how);
    }
    if (child.expectedExit || this.state === 'stopping') return;
    this.exits.exited(child.role, how);
    if (this.gateway.exited(child, how)) return;
    log.warn(`${child.role} process exited unexpectedly`, { pid: child.pid, how });
    // Workers start again on demand; the next one is a restart all the same.
    if (child.role !== 'gateway') this.exits.restarted(child.role);
  }

  /** A `/ws` event the supervisor publishes itself: to the gateway, and to the roles that follow sessions. */
  private readonly publish: Publish = typedPublish((topic, type, data) => {
    const e = { topic, type, data };
    this.gateway.child?.endpoint.emit('ws.publish', e);
    this.toSessionFollowers(e);
  });

  /** A session's events also go to the roles that follow sessions (channels streams chats' turns to their platform). */
  private toSessionFollowers(
    e: { topic: string; type: string; data: unknown },
    from?: { endpoint: unknown },
  ): void {
    if (!e.topic.startsWith('session:')) return;
    for (const c of this.services.all())
      if (roleSpecs[c.role].followsSessions === true && c !== from && c.alive)
        c.endpoint.emit('ws.publish', e);
  }

  private pick(role: ChildRole): Child | undefined | Promise<Child | undefined> {
    if (role === 'gateway') return this.gateway.child;
    if (role === 'agent') return this.agents.pick(false);
    // A request for an on-demand role starts it (a manual run of a disabled task, a browser verify).
    return roleSpecs[role].onDemand === true ? this.services.ensure(role) : this.services.get(role);
  }

  /** Trash older than the retention, or beyond the size cap, goes for good: at start and daily. */
  private enforceRetention(): void {
    try {
      const { removed, freed_bytes } = enforceTrashRetention(
        this.db,
        this.paths,
        this.settings.config.trash,
      );
      if (removed.length > 0)
        log.info('trash retention removed items', { items: removed.length, freed_bytes });
    } catch (err) {
      log.warn('trash retention failed; will try again tomorrow', {
        error: (err as Error).message,
      });
    }
  }

  /** A config edit through the API: children learn of it before the edit's request is answered. */
  private applyConfig(config: Config): void {
    config.cors = effectiveCors(config.cors, this.flags.cors); // --cors flags stay merged in
    this.settings = { ...this.settings, config };
    redactConfigSecrets(config);
    void configureTelemetry(config.telemetry, 'supervisor');
    for (const c of this.children()) c.endpoint.emit('config.changed', { config });
    this.services.sync();
    this.versionCheck.sync();
  }

  private applyLogSettings(config: Config): void {
    redact(this.settings.key);
    redactConfigSecrets(config);
    if (!process.env.SVC_LOG_LEVEL) setLogLevel(config.log.level);
    this.logs?.setLimits(config.log);
    void configureTelemetry(config.telemetry, 'supervisor');
  }
}

/** $SVC_HOME is private: created 0700, and tightened if someone loosened it. */
function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(dir, 0o700);
    log.warn('the svc folder was open to other users; its mode is now 0700', {
      dir,
      was: mode.toString(8),
    });
  }
}

/** Started by systemd (its unit's INVOCATION_ID, parent systemd) or by launchd under our label. */
function underServiceManager(): boolean {
  if (process.platform === 'darwin') return process.env.XPC_SERVICE_NAME === 'dev.svc.serve';
  if (!process.env.INVOCATION_ID) return false;
  // systemd 248+ names the unit's main process; older ones are told by the parent's name.
  if (process.env.SYSTEMD_EXEC_PID === String(process.pid)) return true;
  try {
    return readFileSync(`/proc/${process.ppid}/comm`, 'utf8').trim() === 'systemd';
  } catch {
    return false;
  }
}
