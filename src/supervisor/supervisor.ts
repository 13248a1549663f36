import { raiseNofile } from '../shared/fd-limit.js';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { SendHandle } from 'node:child_process';
import type { Server } from 'node:net';
import type { Config } from '../shared/config/schema.js';
import { log, redact, setLogConsole, setLogLevel, setLogRole } from '../shared/log.js';
import { formatHostPort, type ListenAddr } from '../shared/net/addr.js';
import type { Paths } from '../shared/paths.js';
import type { ChildRole, ProcessStatus, Status, WsState } from '../shared/protocol/ipc.js';
import { openAndMigrate, type Db } from '../shared/store/db.js';
import { MetaStore } from '../shared/store/meta.js';
import { failOrphanTurns } from '../shared/store/turns.js';
import { cronWorkNeeded } from '../shared/store/cron.js';
import { enforceTrashRetention } from '../shared/store/trash.js';
import { sandboxStatus } from '../shared/sandbox/status.js';
import { version } from '../shared/version.js';
import { Backoff } from './backoff.js';
import { assertPortFree } from './port-check.js';
import { redactConfigSecrets } from '../shared/config/secrets.js';
import { Child } from './child-process.js';
import { takeListener } from './listener-handoff.js';
import { forkChild, type Forked } from './spawn-child.js';
import { handleConfigEdits } from './config-service.js';
import { handleMcpConfigEdits } from './mcp-config.js';
import { handleChannelConfigEdits } from './channels-config.js';
import { handleBrowserConfigEdits } from './browser-config.js';
import { handleTrashRestore } from './trash-restore.js';
import { Services } from './services.js';
import { serveControl } from './control-socket.js';
import { IpcRouter } from './ipc-router.js';
import { LogSink } from './log-sink.js';
import { TurnDispatcher } from './turns.js';
import { IdleRetirer } from './idle-retire.js';
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
  private gateway: Child | undefined;
  private readonly agents: Child[] = [];
  private readonly backoff = new Map<ChildRole, Backoff>();
  private readonly restartCounts = new Map<ChildRole, number>();
  private readonly lastExit = new Map<ChildRole, string>();
  private readonly pendingRespawn = new Map<ChildRole, NodeJS.Timeout>();
  /** While no gateway serves: why, and when the next start is tried (null while one is starting). */
  private gatewayDown: { crashLoop: boolean; nextTryAt: number | null } | undefined;
  private readonly router = new IpcRouter((role) => this.pick(role), (e, from) => this.toChannels(e, from));
  private state: Status['state'] = 'starting';
  private readonly startedAt = new Date();
  private boundPort: number | undefined;
  private uws: 'native' | 'fallback' | null = null;
  private engine: 'uws' | 'node' | null = null;
  private restarts = 0;
  private lastRestartError: string | null = null;
  private restartInFlight: Promise<void> | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  /** Idle agent workers retire, so an idle svc is back to two processes. */
  private readonly idle = new IdleRetirer({
    members: () => this.agents,
    busy: (a) => this.turns.turnsOn(a) > 0 || a.endpoint.inflight > 0,
    idleSeconds: () => this.settings.config.agent.idle_retire_seconds,
    withdraw: (a) => {
      const i = this.agents.indexOf(a);
      if (i >= 0) this.agents.splice(i, 1);
    },
    restore: (a) => {
      if (a.alive && !this.agents.includes(a)) this.agents.push(a);
    },
    stopGraceMs: STOP_GRACE_MS,
  });
  private turns!: TurnDispatcher;
  /** Roles started by the role table alone (mcp). */
  private readonly services = new Services({
    spawn: (role) => this.spawn(role),
    config: () => this.settings.config,
    store: { cronWork: () => cronWorkNeeded(this.db) },
    running: () => this.state !== 'stopping',
  });
  private logs: LogSink | undefined;
  /** Pings every child; one that stops answering is killed and replaced. */
  private readonly liveness = new Liveness({
    children: () => [this.gateway, ...this.agents, ...this.services.all()],
    bounds: () => ({ pingMs: this.settings.config.liveness.ping_seconds * 1000, timeoutMs: this.settings.config.liveness.timeout_seconds * 1000 }),
    unresponsive: (child, silentMs) => this.killHung(child, `it answered no liveness ping for ${(silentMs / 1000).toFixed(1)} s`),
  });
  /** The automatic version check, `svc upgrade` run for the Web UI, and the replacement by a new version. */
  private readonly versionCheck = new VersionCheck(() => this.settings.config, () => this.upgrades.running, (info) => this.publish('server', 'version', info));
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
    if (this.boundPort === undefined) return null;
    const host = this.settings.listen.host === '' ? '127.0.0.1' : this.settings.listen.host;
    return `http://${formatHostPort(host, this.boundPort)}/`;
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
    mkdirSync(this.paths.runDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.paths.logsDir, { recursive: true, mode: 0o700 });
    this.logs = new LogSink(this.paths.logsDir, this.settings.config.log, process.env.SVC_DAEMONIZED !== '1');
    if (process.env.SVC_DAEMONIZED === '1') setLogConsole(false);
    await assertPortFree(this.settings.listen);
    // Before any child is forked, so every role inherits the raised descriptor limit.
    const nofile = raiseNofile();
    log.info(nofile.note, nofile.limit ? { soft: nofile.limit.soft, hard: nofile.limit.hard } : undefined);
    const { db, applied } = openAndMigrate(this.paths.db);
    this.db = db;
    if (applied.length > 0) log.info('store migrated', { versions: applied.join(',') });
    new MetaStore(db).set('last_start', this.startedAt.toISOString());
    const orphans = failOrphanTurns(db, 'svc stopped while this turn ran');
    if (orphans > 0) log.warn('turns left running by an earlier svc were recorded as failed', { turns: orphans });
    this.turns = new TurnDispatcher({
      db,
      agentForTurn: () => this.agentFor(true),
      killWorker: (agent, why) => this.killHung(agent, why),
      accepting: () => this.state === 'running',
      retryAfterS: () => this.retryAfterS(),
      maxContinuations: () => this.settings.config.agent.max_continuations,
      publish: this.publish,
    });
    this.idle.start();
    this.enforceRetention();
    this.retentionTimer = setInterval(() => this.enforceRetention(), DAY_MS);
    this.retentionTimer.unref();

    this.control = await serveControl(this.paths.controlSocket, async (req) => {
      if (req.cmd === 'status') return this.status();
      if (req.cmd === 'open_url') return { url: this.url, key: this.settings.key, key_source: this.settings.keySource };
      if (req.cmd === 'restart') return this.requestRestart('asked from the command line');
      if (req.cmd === 'replace') return this.requestReplace();
      setImmediate(() => process.kill(process.pid, 'SIGTERM')); // the same path as Ctrl-C
      return { stopping: true };
    });
    writeFileSync(this.paths.pidFile, `${process.pid}\n`, { mode: 0o600 });

    const early = this.preforked;
    this.preforked = undefined;
    const gateway = await this.spawnGateway(this.settings.listen.port, early);
    this.state = 'running';
    this.services.sync();
    this.liveness.start();
    this.versionCheck.sync();
    return { port: this.boundPort ?? gateway.port, engine: gateway.engine };
  }

  /** Stops every child, then removes the socket and pid file. */
  async stop(reason: string): Promise<void> {
    this.preforked?.proc.kill('SIGKILL'); // a start that failed before adopting it
    if (this.state === 'stopping') return;
    // A start that failed has already said why in one line; "stopping" would only be noise after it.
    if (this.state !== 'starting') log.info('stopping', { reason });
    this.state = 'stopping';
    for (const t of this.pendingRespawn.values()) clearTimeout(t);
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.idle.stop();
    this.liveness.stop();
    this.versionCheck.stop();
    const children = [this.gateway, ...this.agents].filter((c): c is Child => c !== undefined);
    await Promise.all([...children.map((c) => c.stop(STOP_GRACE_MS)), this.services.stop(STOP_GRACE_MS)]);
    this.control?.close();
    rmSync(this.paths.controlSocket, { force: true });
    rmSync(this.paths.pidFile, { force: true });
    this.db?.close();
    this.logs?.close();
  }

  async status(): Promise<Status> {
    const children = [this.gateway, ...this.agents, ...this.services.all()].filter((c): c is Child => c !== undefined);
    const processes: ProcessStatus[] = [
      {
        role: 'supervisor',
        pid: process.pid,
        state: this.state === 'running' ? 'running' : this.state === 'draining' || this.state === 'restarting' ? 'draining' : 'starting',
        uptime_s: Math.round((Date.now() - this.startedAt.getTime()) / 1000),
        restarts: 0,
        rss_bytes: process.memoryUsage.rss(),
        inflight_turns: 0,
        last_exit: null,
      },
      ...(await Promise.all(children.map((c) => this.childStatus(c)))),
    ];
    const down = this.gateway === undefined ? this.gatewayDown : undefined;
    if (down) {
      processes.push({
        role: 'gateway',
        pid: -1,
        state: down.nextTryAt === null ? 'starting' : down.crashLoop ? 'crash_loop' : 'backoff',
        uptime_s: 0,
        restarts: this.restartCounts.get('gateway') ?? 0,
        rss_bytes: null,
        inflight_turns: 0,
        last_exit: this.lastExit.get('gateway') ?? null,
        next_try_at: down.nextTryAt === null ? null : new Date(down.nextTryAt).toISOString(),
      });
    }
    processes.push(...this.services.waiting());
    return {
      version,
      // Running with no gateway serves nobody: say so rather than "running".
      state: down && this.state === 'running' ? 'degraded' : this.state,
      started_at: this.startedAt.toISOString(),
      home: this.paths.home,
      addr: this.boundPort === undefined ? null : formatHostPort(this.settings.listen.host || '0.0.0.0', this.boundPort),
      url: this.url,
      uws: this.uws,
      engine: this.engine,
      restarts: this.restarts,
      last_restart_error: this.lastRestartError,
      processes,
      sandbox: await sandboxStatus(this.settings.config.sandbox.enabled),
    };
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
    this.gateway?.endpoint.emit('server.draining', { retry_after_s: this.retryAfterS() });
    await this.waitForTurns(drainSeconds * 1000);

    let next: Settings;
    try {
      next = readSettings(this.paths, this.flags, this.settings.listen);
    } catch (err) {
      this.lastRestartError = (err as Error).message;
      log.error('restart abandoned: the configuration cannot be used; still running with the previous one', { error: this.lastRestartError });
      this.gateway?.endpoint.emit('server.resumed', { reason: this.lastRestartError });
      this.state = 'running';
      return;
    }
    this.state = 'restarting';
    this.settings = next;
    this.applyLogSettings(next.config);
    const old = this.gateway;
    const oldAgents = this.agents.splice(0);
    try {
      // The new gateway goes on numbering /ws events where the old one stops, so clients resume
      // with `since`; without that (an old gateway that does not answer) they reload instead.
      const wsState = old ? await old.endpoint.request('gateway.ws_state', {}, { timeoutMs: 5000 }).catch(() => undefined) : undefined;
      // The old gateway keeps its socket until the new one listens on the same port (SO_REUSEPORT,
      // or the socket itself passed on where the engine cannot share a port).
      await this.spawnGateway(this.boundPort ?? next.listen.port, undefined, old ? await takeListener(old) : undefined, wsState);
    } catch (err) {
      this.lastRestartError = `the new gateway did not start: ${(err as Error).message}`;
      log.error('restart abandoned', { error: this.lastRestartError });
      this.gateway = old;
      this.agents.push(...oldAgents);
      old?.endpoint.emit('server.resumed', { reason: this.lastRestartError });
      this.router.release();
      this.state = 'running';
      return;
    }
    if (old) {
      old.expectedExit = true;
      await old.endpoint.request('gateway.handover', {}, { timeoutMs: 15_000 }).catch(() => undefined);
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
    this.gateway?.endpoint.emit('server.draining', { retry_after_s: this.retryAfterS() });
    await this.waitForTurns(this.settings.config.restart.drain_seconds * 1000);
    const bound = this.boundPort === undefined ? null : formatHostPort(this.settings.listen.host || '0.0.0.0', this.boundPort);
    const record = {
      exec: process.execPath,
      args: [...process.execArgv, process.argv[1] ?? 'svc', 'serve', ...serveArgs(process.argv.slice(2), bound)],
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

  private async waitForTurns(boundMs: number): Promise<void> {
    const until = Date.now() + boundMs;
    while (this.turns.count > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (this.turns.count === 0) return;
    log.warn('drain bound reached with turns still running; stopping them and restarting', { drain_seconds: boundMs / 1000, turns: this.turns.count });
    await this.turns.interruptAll(STOP_GRACE_MS);
  }

  private retryAfterS(): number {
    return Math.max(1, Math.min(30, Math.ceil(this.settings.config.restart.drain_seconds)));
  }

  /**
   * The least busy agent worker (fewest turns, then fewest requests in flight). A turn (`grow`)
   * gets a new worker when every one is busy and the pool may grow; any request gets one when
   * none runs. Nothing is started while svc drains or stops.
   */
  private agentFor(grow: boolean): Child | undefined {
    const load = (a: Child) => this.turns.turnsOn(a) * 1000 + a.endpoint.inflight;
    const least = this.agents.filter((a) => a.alive).reduce<Child | undefined>((best, a) => (best === undefined || load(a) < load(best) ? a : best), undefined);
    if (this.state !== 'running') return least;
    if (!least) return this.spawnAgent();
    if (grow && this.turns.turnsOn(least) > 0 && this.agents.length < this.settings.config.agent.max_workers) return this.spawnAgent();
    return least;
  }

  private spawnAgent(): Child {
    const agent = this.spawn('agent');
    agent.state = 'running';
    this.agents.push(agent);
    void agent.endpoint.request('child.start', { config: this.settings.config }, { to: 'agent', timeoutMs: 15_000 }).catch(() => undefined);
    return agent;
  }

  private async spawnGateway(port: number, forked?: Forked, listener?: SendHandle, wsState?: WsState): Promise<{ port: number; engine: 'uws' | 'node' }> {
    const child = this.spawn('gateway', forked);
    if (listener) child.sendRaw({ kind: 'event', type: 'gateway.listener', payload: {} }, listener, () => (listener as { close?: () => void }).close?.());
    let started;
    try {
      started = await child.endpoint.request(
        'child.start',
        {
          config: this.settings.config,
          access_key: this.settings.key,
          listen: { host: this.settings.listen.host, port },
          started_at: this.startedAt.getTime(),
          ...(wsState ? { ws_state: wsState } : {}),
        },
        { to: 'gateway', timeoutMs: 15_000 },
      );
    } catch (err) {
      child.expectedExit = true;
      await child.stop(1000);
      throw err;
    }
    const previous = this.gateway;
    this.gateway = child;
    this.router.release();
    this.gatewayDown = undefined;
    child.state = 'running';
    if (previous && previous !== child && previous.alive) previous.state = 'draining';
    this.boundPort = started.port ?? port;
    this.uws = started.uws ?? null;
    this.engine = started.engine ?? 'uws';
    return { port: this.boundPort, engine: this.engine };
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
    handleConfigEdits(child.endpoint, this.paths.config, () => this.settings.config, (config) => this.applyConfig(config));
    const editCtx = { endpoint: child.endpoint, file: this.paths.config, db: this.db, paths: this.paths, current: () => this.settings.config, changed: (config: Config) => this.applyConfig(config) };
    handleTrashRestore(child.endpoint, this.db, this.paths, { ...handleMcpConfigEdits(editCtx), ...handleChannelConfigEdits(editCtx) });
    handleBrowserConfigEdits(editCtx);
    child.endpoint.handle('turn.start', (p) => this.turns.start(p));
    child.endpoint.handle('turn.interrupt', (p) => this.turns.interrupt(p.session_id, p.wait === true));
    child.endpoint.handle('approval.answer', (p) => this.turns.answerApproval(p));
    child.endpoint.handle('approval.list', (p) => this.turns.pendingApprovals(p));
    child.endpoint.onEvent((event) => {
      if (event.type === 'turn.ended') this.turns.ended(event.payload);
      else if (event.type === 'ws.publish' && child.role === 'agent') this.turns.observe(event.payload);
    });
    this.handleCron(child);
    void child.exited.then(({ code, signal }) => this.onExit(child, code, signal));
    return child;
  }

  /**
   * Scheduled tasks: a task changed (start or stop the cron worker, then have it reload the task),
   * a run ended (stop the worker if nothing wants it), and the turn events its runs wait for.
   */
  private handleCron(child: Child): void {
    child.endpoint.handle('cron.changed', async (p) => {
      this.services.sync();
      const cron = this.services.get('cron');
      // Not awaited: a worker still starting reads the task at its start, and handles this after that in order.
      if (cron) void cron.endpoint.request('cron.reload', p, { timeoutMs: 30_000 }).catch((err: Error) => log.warn('the cron worker did not reload a task', { task: p.id, error: err.message }));
      return {};
    });
    child.endpoint.handle('cron.idle', () => {
      this.services.sync();
      return {};
    });
    child.endpoint.onEvent((event) => {
      if (event.type !== 'turn.ended' && event.type !== 'cron.approval') return;
      const cron = this.services.get('cron');
      if (cron && cron !== child) cron.endpoint.emit(event.type, event.payload as never);
    });
  }

  /** A child that does not answer (hung, or stopped with SIGSTOP): killed, then replaced as after a crash. */
  private killHung(child: Child, why: string): void {
    if (!child.alive || child.hung) return;
    log.error(`the ${child.role} process stopped answering; killing and replacing it`, { pid: child.pid, why });
    this.hungWhy.set(child, why);
    child.killUnresponsive();
  }

  private readonly hungWhy = new WeakMap<Child, string>();

  private onExit(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    const hung = this.hungWhy.get(child);
    const how = hung ? `killed as unresponsive (${hung})` : signal ? `killed by ${signal}` : `exit code ${code}`;
    if (this.services.exited(child, how)) return;
    if (child.role === 'agent') {
      const i = this.agents.indexOf(child);
      if (i >= 0) this.agents.splice(i, 1);
      this.turns.workerGone(child, how);
    }
    if (child.expectedExit || this.state === 'stopping') return;
    this.lastExit.set(child.role, `${how} at ${new Date().toISOString()}`);
    if (child.role !== 'gateway' || this.gateway !== child) {
      log.warn(`${child.role} process exited unexpectedly`, { pid: child.pid, how });
      // Workers start again on demand; the next one is a restart all the same.
      if (child.role !== 'gateway') this.restartCounts.set(child.role, (this.restartCounts.get(child.role) ?? 0) + 1);
      return;
    }
    this.gateway = undefined;
    this.respawnGateway(how, true);
  }

  /**
   * Starts a gateway again. One that had served comes back at once, so no request that crashes
   * it can buy a minute of downtime; only a gateway that cannot start backs off into a crash-loop
   * pause.
   */
  private respawnGateway(how: string, served: boolean): void {
    const backoff = this.backoff.get('gateway') ?? new Backoff();
    this.backoff.set('gateway', backoff);
    const { delayMs, crashLoop } = served ? { delayMs: 0, crashLoop: false } : backoff.next();
    this.gatewayDown = { crashLoop, nextTryAt: Date.now() + delayMs };
    if (crashLoop) log.error('the gateway cannot start; pausing before the next try', { failures_in_last_minute: backoff.recent, retry_in_s: delayMs / 1000, last: how });
    else log.warn(served ? 'the gateway exited unexpectedly; restarting it' : 'the gateway did not start; trying again', { how, in_ms: delayMs });
    const timer = setTimeout(() => {
      this.pendingRespawn.delete('gateway');
      if (this.state === 'stopping') return;
      this.gatewayDown = { crashLoop, nextTryAt: null };
      this.restartCounts.set('gateway', (this.restartCounts.get('gateway') ?? 0) + 1);
      this.spawnGateway(this.boundPort ?? this.settings.listen.port).catch((err: Error) => {
        const why = `did not start: ${err.message}`;
        log.error('the gateway did not come back', { error: err.message });
        this.lastExit.set('gateway', `${why} at ${new Date().toISOString()}`);
        if (this.state !== 'stopping' && this.gateway === undefined) this.respawnGateway(why, false);
      });
    }, delayMs);
    this.pendingRespawn.set('gateway', timer);
  }

  /** A `/ws` event the supervisor publishes itself: to the gateway, and to the channels worker. */
  private readonly publish: Publish = typedPublish((topic, type, data) => {
    const e = { topic, type, data };
    this.gateway?.endpoint.emit('ws.publish', e);
    this.toChannels(e);
  });

  /** A session's events also go to the channels worker, which streams the turns of chats to their platform. */
  private toChannels(e: { topic: string; type: string; data: unknown }, from?: { endpoint: unknown }): void {
    const channels = e.topic.startsWith('session:') ? this.services.get('channels') : undefined;
    if (channels && channels !== from) channels.endpoint.emit('ws.publish', e);
  }

  private pick(role: ChildRole): Child | undefined | Promise<Child | undefined> {
    if (role === 'gateway') return this.gateway;
    if (role === 'agent') return this.agentFor(false);
    if (role === 'cron') return this.services.ensure('cron'); // a manual run of a disabled task starts it
    if (role === 'browser') return this.services.ensure('browser'); // a verify before any browser is configured starts it
    return this.services.get(role);
  }

  private async childStatus(c: Child): Promise<ProcessStatus> {
    // One already known not to answer is not waited for: status stays quick while it lasts.
    const stats = c.state === 'unresponsive' ? undefined : await c.endpoint.request('child.stats', {}, { to: c.role, timeoutMs: 1000 }).catch(() => undefined);
    return {
      role: c.role,
      pid: c.pid,
      state: c.state,
      uptime_s: Math.round((Date.now() - c.startedAt) / 1000),
      restarts: this.restartCounts.get(c.role) ?? this.services.restartsOf(c.role),
      rss_bytes: stats?.rss_bytes ?? null,
      inflight_turns: stats?.inflight_turns ?? 0,
      last_exit: this.lastExit.get(c.role) ?? this.services.lastExitOf(c.role),
    };
  }

  /** Trash older than the retention, or beyond the size cap, goes for good: at start and daily. */
  private enforceRetention(): void {
    try {
      const { removed, freed_bytes } = enforceTrashRetention(this.db, this.paths, this.settings.config.trash);
      if (removed.length > 0) log.info('trash retention removed items', { items: removed.length, freed_bytes });
    } catch (err) {
      log.warn('trash retention failed; will try again tomorrow', { error: (err as Error).message });
    }
  }

  /** A config edit through the API: children learn of it before the edit's request is answered. */
  private applyConfig(config: Config): void {
    config.cors = effectiveCors(config.cors, this.flags.cors); // --cors flags stay merged in
    this.settings = { ...this.settings, config };
    redactConfigSecrets(config);
    for (const c of [this.gateway, ...this.agents, ...this.services.all()]) c?.endpoint.emit('config.changed', { config });
    this.services.sync();
    this.versionCheck.sync();
  }

  private applyLogSettings(config: Config): void {
    redact(this.settings.key);
    redactConfigSecrets(config);
    if (!process.env.SVC_LOG_LEVEL) setLogLevel(config.log.level);
    this.logs?.setLimits(config.log);
  }
}

/** $SVC_HOME is private: created 0700, and tightened if someone loosened it. */
function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(dir, 0o700);
    log.warn('the svc folder was open to other users; its mode is now 0700', { dir, was: mode.toString(8) });
  }
}

/** Started by systemd (its unit's INVOCATION_ID, parent systemd) or by launchd under our label. */
function underServiceManager(): boolean {
  if (process.platform === 'darwin') return process.env.XPC_SERVICE_NAME === 'dev.svc.serve';
  if (!process.env.INVOCATION_ID) return false;
  try {
    return readFileSync(`/proc/${process.ppid}/comm`, 'utf8').trim() === 'systemd';
  } catch {
    return false;
  }
}
