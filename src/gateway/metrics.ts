import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isTurnEnd } from '../shared/protocol/event-names.js';
import type { Status } from '../shared/protocol/ipc.js';
import type { Db } from '../shared/store/db.js';
import { stmt } from '../shared/store/util.js';
import type { HubEvent } from './ws/hub.js';

/**
 * GET /api/metrics: Prometheus text from prom-client. Three sources, each cheap:
 * - /ws events as the hub sends them (turns, first deltas, tool results, approvals, MCP and
 *   channel states): counted since this gateway started, as Prometheus counters are;
 * - usage_records, read incrementally by rowid at each scrape (model calls, latency, errors,
 *   tokens, cost): totals over the whole store, so they survive restarts;
 * - the supervisor's status at scrape time (memory, CPU and restarts per process).
 * Not collected (no cheap source today): the permission engine's allow/deny verdict per call
 * (events carry only approvals asked and results), MCP tool latency, and per-turn CPU.
 */

const READ_BATCH = 5000;

interface LiveTurn {
  started: number;
  origin: string;
  delta: boolean;
}

interface UsageRow {
  rowid: number;
  provider: string;
  model: string;
  model_id: string | null;
  origin: string;
  status: string;
  input_tokens: number | null;
  cached_input_tokens: number | null;
  cache_write_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: number | null;
  latency_ms: number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly turns = new Map<string, LiveTurn>();
  private readonly approvals = new Map<string, { turn: string; call: string }>();
  private lastRowid = 0;
  private readonly mcpLast = new Map<string, string>();
  private readonly channelLast = new Map<string, string>();

  private readonly turnsTotal = this.counter(
    'svc_turns_total',
    'Turns ended, by status and origin.',
    ['status', 'origin'],
  );
  private readonly turnSeconds = new Histogram({
    name: 'svc_turn_duration_seconds',
    help: 'From a turn starting to its end, whatever the end (svc_turns_total has them by status).',
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry],
  });
  private readonly firstDelta = new Histogram({
    name: 'svc_turn_first_delta_seconds',
    help: "From a turn starting to the first piece of the model's reply reaching clients.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly toolCalls = this.counter(
    'svc_tool_calls_total',
    'Tool calls that finished, by tool and result (ok or error; a denied call is an error).',
    ['tool', 'result'],
  );
  private readonly approvalsAsked = this.counter(
    'svc_approvals_requested_total',
    'Tool calls the permission engine asked the user about, by tool.',
    ['tool'],
  );
  private readonly modelCalls = this.counter(
    'svc_model_calls_total',
    'Model calls made, by provider, model entry and status (ok, error, interrupted).',
    ['provider', 'model', 'status'],
  );
  private readonly modelSeconds = new Histogram({
    name: 'svc_model_call_duration_seconds',
    help: 'How long a model call took (to the end of its reply), by provider.',
    labelNames: ['provider'],
    buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320],
    registers: [this.registry],
  });
  private readonly tokens = this.counter(
    'svc_model_tokens_total',
    'Tokens the providers reported, by model entry, origin and kind (input excludes cached and cache-written).',
    ['model', 'origin', 'kind'],
  );
  private readonly unknownUsage = this.counter(
    'svc_model_calls_usage_unknown_total',
    'Model calls whose provider reported no token counts, by model entry.',
    ['model'],
  );
  private readonly cost = this.counter(
    'svc_model_cost_usd_total',
    'What model calls cost in US dollars at the prices known when recorded, by model entry and origin.',
    ['model', 'origin'],
  );
  private readonly approvalsWaiting = this.gauge(
    'svc_approvals_waiting',
    'Approvals asked and not yet answered, withdrawn or expired.',
    [],
  );
  private readonly wsConnections = this.gauge('svc_ws_connections', 'Open /ws connections.', []);
  private readonly wsSubscriptions = this.gauge(
    'svc_ws_subscriptions',
    'Topic subscriptions over all /ws connections.',
    [],
  );
  private readonly processMemory = this.gauge(
    'svc_process_resident_memory_bytes',
    'Resident memory of each svc process, by role and pid.',
    ['role', 'pid'],
  );
  private readonly processCpu = this.gauge(
    'svc_process_cpu_seconds',
    'CPU time (user + system) each svc process used since it started, by role and pid.',
    ['role', 'pid'],
  );
  private readonly processUp = this.gauge(
    'svc_process_running',
    'Whether each process of the table is running (1) or not (0), by role and pid.',
    ['role', 'pid', 'state'],
  );
  private readonly restarts = this.gauge(
    'svc_process_restarts',
    'Unexpected exits a role was restarted after, since svc started.',
    ['role'],
  );
  private readonly mcpState = this.gauge(
    'svc_mcp_server_connected',
    'Whether an MCP server is connected (1) or not (0), by server and status, as last announced.',
    ['server', 'status'],
  );
  private readonly channelState = this.gauge(
    'svc_channel_running',
    "Whether a channel's adapter is running (1) or not (0), by platform and state, as last announced.",
    ['platform', 'state'],
  );

  constructor(
    private readonly db: Db,
    private readonly status: () => Promise<Status>,
    private readonly ws: () => { connections: number; subscriptions: number },
  ) {}

  /** Hears every /ws event the hub sends. */
  readonly onEvent = (e: HubEvent): void => {
    const d = (e.data ?? {}) as Record<string, unknown>;
    const turnId = typeof d.turn_id === 'string' ? d.turn_id : undefined;
    if (e.type === 'turn.started' && turnId) {
      this.turns.set(turnId, {
        started: performance.now(),
        origin: String(d.origin ?? 'unknown'),
        delta: false,
      });
    } else if (e.type === 'turn.text_delta' && turnId) {
      const t = this.turns.get(turnId);
      if (t && !t.delta) {
        t.delta = true;
        this.firstDelta.observe((performance.now() - t.started) / 1000);
      }
    } else if (isTurnEnd(e.type) && turnId) {
      const status = e.type.slice('turn.'.length);
      const t = this.turns.get(turnId);
      this.turns.delete(turnId);
      this.turnsTotal.inc({ status, origin: t?.origin ?? 'unknown' });
      if (t) this.turnSeconds.observe((performance.now() - t.started) / 1000);
      for (const [id, a] of this.approvals) if (a.turn === turnId) this.approvals.delete(id);
    } else if (e.type === 'turn.tool_result') {
      this.toolCalls.inc({ tool: String(d.name), result: d.is_error === true ? 'error' : 'ok' });
      for (const [id, a] of this.approvals) if (a.call === d.call_id) this.approvals.delete(id);
    } else if (e.type === 'approval.requested' && turnId) {
      this.approvalsAsked.inc({ tool: String(d.tool) });
      this.approvals.set(String(d.approval_id), { turn: turnId, call: String(d.call_id) });
    } else if (e.type === 'approval.withdrawn' || e.type === 'approval.expired') {
      this.approvals.delete(String(d.approval_id));
    } else if (e.type === 'mcp.status') {
      this.latest(
        this.mcpState,
        this.mcpLast,
        'server',
        String(d.name),
        'status',
        String(d.status),
      );
      this.mcpState.set(
        { server: String(d.name), status: String(d.status) },
        d.status === 'connected' ? 1 : 0,
      );
    } else if (e.type === 'channels.status') {
      const platform = String(d.platform);
      this.latest(
        this.channelState,
        this.channelLast,
        'platform',
        platform,
        'state',
        String(d.state),
      );
      this.channelState.set({ platform, state: String(d.state) }, d.state === 'running' ? 1 : 0);
    }
  };

  /** The text for one scrape. */
  async render(): Promise<string> {
    this.readUsage();
    this.approvalsWaiting.set(this.approvals.size);
    const ws = this.ws();
    this.wsConnections.set(ws.connections);
    this.wsSubscriptions.set(ws.subscriptions);
    const status = await this.status().catch(() => undefined);
    if (status) {
      this.processMemory.reset();
      this.processCpu.reset();
      this.processUp.reset();
      this.restarts.reset();
      for (const p of status.processes) {
        const labels = { role: p.role, pid: String(p.pid) };
        if (p.rss_bytes !== null) this.processMemory.set(labels, p.rss_bytes);
        if (p.cpu_seconds != null) this.processCpu.set(labels, p.cpu_seconds);
        this.processUp.set({ ...labels, state: p.state }, p.state === 'running' ? 1 : 0);
        this.restarts.set({ role: p.role }, p.restarts);
      }
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Model calls recorded since the last scrape, into the counters. */
  private readUsage(): void {
    for (;;) {
      const rows = stmt<[number, number], UsageRow>(
        this.db,
        `SELECT rowid, provider, model, model_id, origin, status, input_tokens, cached_input_tokens,
          cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, latency_ms
         FROM usage_records WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      ).all(this.lastRowid, READ_BATCH);
      for (const r of rows) {
        const model = r.model_id ?? `${r.provider}/${r.model}`;
        this.modelCalls.inc({ provider: r.provider, model, status: r.status });
        this.modelSeconds.observe({ provider: r.provider }, r.latency_ms / 1000);
        if (r.input_tokens === null) this.unknownUsage.inc({ model });
        else {
          const add = (kind: string, n: number | null) => {
            if (n) this.tokens.inc({ model, origin: r.origin, kind }, n);
          };
          add('input', r.input_tokens);
          add('cached_input', r.cached_input_tokens);
          add('cache_write', r.cache_write_tokens);
          add('output', r.output_tokens);
          add('reasoning', r.reasoning_tokens);
        }
        if (r.cost_usd) this.cost.inc({ model, origin: r.origin }, r.cost_usd);
        this.lastRowid = r.rowid;
      }
      if (rows.length < READ_BATCH) return;
    }
  }

  /** A thing's state series replaces its previous one, so only the latest state is reported. */
  private latest<A extends string, B extends string>(
    gauge: Gauge<A | B>,
    last: Map<string, string>,
    idLabel: A,
    id: string,
    stateLabel: B,
    state: string,
  ): void {
    const before = last.get(id);
    if (before !== undefined && before !== state)
      gauge.remove({ [idLabel]: id, [stateLabel]: before } as Record<A | B, string>);
    last.set(id, state);
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
