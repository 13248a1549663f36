import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, ModelEntry } from '../../shared/config/schema.js';
import { log, redact } from '../../shared/log.js';
import type { Paths } from '../../shared/paths.js';
import { IpcCallError, type Endpoint } from '../../shared/protocol/endpoint.js';
import type { PayloadOf } from '../../shared/protocol/ipc.js';
import { DeltaBatcher } from '../../shared/delta-batcher.js';
import { goalSummary, messageSummary } from '../../shared/event-summaries.js';
import type { Publish } from '../../shared/protocol/events.js';
import {
  ipcPublish,
  turnPublish,
  typedPublish,
  type TurnPublish,
} from '../../shared/ws-publish.js';
import { DISK_FULL_REASON, diskFullMessage, isDiskFull } from '../../shared/disk-full.js';
import { resolveModel, takesImages } from '../../shared/providers/resolve.js';
import type { Db } from '../../shared/store/db.js';
import { addGoalUsage, getGoal, putGoal, type Goal } from '../../shared/store/goals.js';
import { appendMessage } from '../../shared/store/messages.js';
import { getSession } from '../../shared/store/sessions.js';
import { setTurnFirstSeq, startTurnRow } from '../../shared/store/turns.js';
import { type CutReply, endTurn, type TurnEnd } from '../../shared/turn-end.js';
import { maybeCompact } from './compaction.js';
import { runLoop } from './loop.js';
import { systemPrompt } from './prompt.js';
import { createProvider, ProviderError, type Provider } from './providers/index.js';
import { RestartInterrupt } from './restart-interrupt.js';
import { clockTool } from './tools/session/clock.js';
import { searchHistoryTool } from './tools/session/search-history.js';
import { goalTool } from './tools/session/goal.js';
import { builtinTools } from './tools/index.js';
import { hostTools } from './tools/host-tools.js';
import { skillTool } from './tools/session/skill.js';
import { runWorkflowTool } from './tools/session/run-workflow.js';
import { runWorkflowTurn, workflowAnnounce, WorkflowFailure } from './workflow-runner.js';
import { startRun } from '../../shared/workflows/start.js';
import type { Session } from '../../shared/store/sessions.js';
import { usableSkills } from '../../shared/skills/catalog.js';
import { mcpTools } from './tools/remote/mcp.js';
import { attachedText } from './tools/remote/mcp-resources.js';
import { untilAborted } from './tools/remote/mcp-result.js';
import type { McpResourceRef } from '../../shared/protocol/mcp.js';
import { browserTools } from './tools/remote/browser.js';
import { McpChannel } from './tools/remote/mcp-channel.js';
import { titleChat } from './titling.js';
import { BudgetExceeded, Meter } from './metering.js';
import { cronTaskOfSession, type UsageOrigin } from '../../shared/store/usage.js';
import type { BudgetRefusal } from '../../shared/usage/budgets.js';
import { allowAll, ToolRegistry, type PermissionGate, type Tool } from './tools/registry.js';
import { own } from '../../shared/own.js';
import {
  flushTraces,
  noSpan,
  type Span,
  startSpan,
  telemetryReady,
} from '../../shared/telemetry/trace.js';

type TurnRequest = PayloadOf<'agent.turn'>;

/** The one batching window of streamed text on its way to clients (at most one frame per topic per window). */
const DELTA_WINDOW_MS = 16;

/** What a running turn publishes and records through, and where its trace goes. */
interface TurnTools {
  signal: AbortSignal;
  publish: TurnPublish;
  meter: Meter;
  span: Span;
}

class TurnFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Runs the turns the supervisor hands this worker, each with its own abort switch. */
export class TurnRunner {
  private readonly active = new Map<string, AbortController>();
  /** Streaming deltas merged before they cross to the supervisor: far fewer IPC messages a turn. */
  private readonly batcher = new DeltaBatcher(DELTA_WINDOW_MS, {
    delta: (topic, type, turnId, delta) =>
      this.endpoint.emit('ws.delta', { topic, type, turn_id: turnId, delta }),
    event: (topic, type, data) => this.endpoint.emit('ws.publish', { topic, type, data }),
  });
  /** Every event of this worker's turns, typed and capped, through the batcher. */
  private readonly publish: Publish = typedPublish((topic, type, data) =>
    this.batcher.publish(topic, type, data),
  );

  /** The way to the mcp worker: a direct channel once brokered, else the supervisor's relay. */
  private readonly mcp: McpChannel;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly db: Db,
    private readonly paths: Paths,
    private readonly config: () => Config,
    private readonly gate: PermissionGate = allowAll,
  ) {
    this.mcp = new McpChannel(endpoint);
  }

  /** Every tool a turn can have (update_goal only appears while a goal is active), MCP tools last. */
  async toolSpecs() {
    return new ToolRegistry(
      this.tools(
        goalTool(this.db, () => {}),
        await mcpTools(this.mcp, this.config()),
      ),
    ).catalog();
  }

  /** The tools, in the order the model sees them; one list serves turns and GET /api/tools. */
  private tools(goal?: Tool, mcp: Tool[] = []): Tool[] {
    return [
      ...builtinTools(),
      ...hostTools({
        secrets: () => providerSecrets(this.config()),
        sandbox: { enabled: () => this.config().sandbox.enabled },
        publish: ipcPublish(this.endpoint),
        requestRestart: async (reason) => {
          await this.endpoint.request('supervisor.restart', { reason: reason.slice(0, 200) });
        },
      }),
      clockTool,
      searchHistoryTool,
      skillTool,
      runWorkflowTool((name, inputs) =>
        startRun(this.db, this.paths, name, inputs, (p) => this.endpoint.request('turn.start', p)),
      ),
      ...(goal ? [goal] : []),
      ...browserTools(this.endpoint, this.config), // none while no browser is configured
      ...mcp,
    ];
  }

  get inflight(): number {
    return this.active.size;
  }

  /**
   * Takes a turn: its row is written before the supervisor hears it was taken, so the turn is on
   * record by the time its caller has its id. A row already there means svc ended the turn before
   * it reached this worker (it answered too late): it is not run.
   */
  accept(req: TurnRequest): { accepted: true } {
    try {
      startTurnRow(this.db, turnRef(req));
    } catch (err) {
      if (isDiskFull(err))
        throw new IpcCallError('insufficient_storage', diskFullMessage(this.paths.home));
      throw err;
    }
    const ac = new AbortController();
    this.active.set(req.turn_id, ac);
    void this.run(req, ac.signal)
      .catch((err: unknown) =>
        log.error('a turn ended with an error past its own handling', {
          turn: req.turn_id,
          error: (err as Error)?.message ?? String(err),
        }),
      )
      .finally(() => this.active.delete(req.turn_id));
    return { accepted: true };
  }

  /** `restart`: svc restarts past its drain bound; the turn ends as `restarted` rather than by the user. */
  interrupt(turnId: string, restart = false): boolean {
    const ac = this.active.get(turnId);
    if (!ac) return false;
    ac.abort(restart ? new RestartInterrupt() : new Error('interrupted'));
    return true;
  }

  /**
   * Every turn ends in exactly one of completed, failed or interrupted, on record and as one end
   * event (the supervisor hears the end from that event too).
   */
  private async run(req: TurnRequest, signal: AbortSignal): Promise<void> {
    const publish = turnPublish(this.publish, req.session_id, req.turn_id);
    // Under the supervisor's span (traces configured): every model and tool call of the turn goes under this.
    if (req.traceparent) await telemetryReady();
    const span = req.traceparent
      ? startSpan(
          'svc.turn.run',
          {
            'svc.turn_id': req.turn_id,
            'svc.session_id': req.session_id,
            'svc.origin': req.origin,
          },
          req.traceparent,
        )
      : noSpan;
    const session = getSession(this.db, req.session_id);
    const meter = this.meterFor(req, session?.channel ?? null, span);
    let end: TurnEnd;
    let cut: CutReply | undefined;
    try {
      if (!session)
        throw new TurnFailure('not_found', `The session ${req.session_id} no longer exists.`);
      const outcome = await this.turn(req, session, { signal, publish, meter, span }, (c) => {
        cut = c;
      });
      this.afterTurn(req, outcome, publish);
      end = {
        status: 'completed',
        stop_reason: outcome.stopReason,
        reply: outcome.text,
        usage: outcome.usage,
        steps: outcome.steps,
      };
    } catch (err) {
      end = signal.aborted ? interruptedEnd(signal) : failedEnd(err, req.turn_id, this.paths.home);
    }
    // Records a failed write left waiting (a full disk) get one more chance.
    record(req.turn_id, () => meter.flush());
    endTurn(this.db, publish, turnRef(req), end, cut);
    if (span.traceparent) {
      span.set({ 'svc.turn.status': end.status });
      if (end.status === 'failed') span.fail(end.reason);
      span.end();
      void flushTraces();
    }
    if (end.status !== 'failed' && !req.workflow_run_id && req.origin !== 'goal')
      this.titleLater(req, end.status === 'completed' ? end.reply : '', end.status === 'completed');
  }

  /**
   * A chat still called "New session" is titled after its first turn, without holding the turn
   * up: by the lite model after a completed reply, else (no lite model, or a stopped reply) by
   * the first line of the message.
   */
  private titleLater(req: TurnRequest, reply: string, completed: boolean): void {
    const config = this.config();
    const entry =
      completed && config.slots.lite ? own(config.models, config.slots.lite) : undefined;
    let lite: { provider: Provider; model: string } | undefined;
    if (entry) {
      try {
        const meter = this.meterFor(req, getSession(this.db, req.session_id)?.channel ?? null);
        lite = {
          provider: meter.wrap(this.provider(entry, config), {
            modelId: config.slots.lite ?? null,
            entry,
            purpose: 'titling',
          }),
          model: entry.model,
        };
      } catch {
        lite = undefined; // a lite entry without an address: the first line is the title
      }
    }
    const announce = (s: Session) => {
      this.publish('sessions', 'session.updated', s);
      this.publish(`session:${s.id}`, 'session.updated', s);
    };
    titleChat({
      db: this.db,
      sessionId: req.session_id,
      userText: req.message.text,
      reply,
      ...(lite ? { lite } : {}),
      announce,
    }).catch((err: unknown) =>
      log.warn('a chat could not be titled', {
        session: req.session_id,
        error: (err as Error).message,
      }),
    );
  }

  /** The MCP resources a person attached, read now: a failed read fails the turn before it stores anything. */
  private async readAttached(refs: McpResourceRef[], signal: AbortSignal) {
    const out = [];
    for (const ref of refs) {
      try {
        const endpoint = await this.mcp.endpoint();
        const r = await untilAborted(endpoint.request('mcp.resource.read', ref), signal);
        out.push({ ...ref, text: attachedText(ref, r.contents) });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new TurnFailure(
          'invalid_request',
          `The attached resource ${ref.uri} could not be read from the MCP server "${ref.server}": ${(err as Error).message}`,
        );
      }
    }
    return out;
  }

  /** What records and limits a turn's model calls: its session, origin, cron task and channel. */
  private meterFor(req: TurnRequest, channel: string | null, trace?: Span): Meter {
    const origin: UsageOrigin = req.origin === 'http' || req.origin === 'ws' ? 'chat' : req.origin;
    return new Meter({
      db: this.db,
      config: this.config,
      scope: {
        sessionId: req.session_id,
        cronTask: cronTaskOfSession(this.db, req.session_id),
        channel,
      },
      turnId: req.turn_id,
      origin,
      workflowRun: req.workflow_run_id ?? null,
      warn: (state) => {
        this.publish('server', 'usage.warning', state);
        // The schedules' notify targets hear of it too (through the cron worker, when one runs).
        this.endpoint.emit('usage.warning', state);
      },
      ...(trace ? { trace } : {}),
    });
  }

  private async turn(
    req: TurnRequest,
    session: Session,
    { signal, publish, meter, span }: TurnTools,
    cut: (reply: CutReply) => void,
  ) {
    const config = this.config();
    if (req.workflow_run_id)
      return this.workflowTurn(
        req,
        req.workflow_run_id,
        session,
        { signal, publish, meter, span },
        cut,
      );
    const modelId = session.model_id ?? config.slots.default;
    const entry = modelId ? own(config.models, modelId) : undefined;
    if (!modelId || !entry)
      throw new TurnFailure(
        'no_model',
        'No model is configured for this session: add a model entry and put it in the default slot.',
      );
    const provider = meter.wrap(this.provider(entry, config), { modelId, entry });

    // Resolved where the turn came in (the uploads on record, their files inside the uploads folder).
    const attachments = req.message.attachments;
    const resources = await this.readAttached(req.message.resources ?? [], signal);
    const userMessage = appendMessage(this.db, session.id, {
      role: 'user',
      content: {
        text: req.message.text,
        ...(attachments.length ? { attachments } : {}),
        ...(resources.length ? { resources } : {}),
        ...(req.origin === 'goal' ? { continuation: true } : {}),
      },
    });
    setTurnFirstSeq(this.db, req.turn_id, userMessage.seq);
    publish('turn.started', {
      session_id: session.id,
      origin: req.origin,
      message: messageSummary(userMessage),
    });

    let goal = getGoal(this.db, session.id);
    const registry = new ToolRegistry(
      this.tools(
        goal?.status === 'active'
          ? goalTool(this.db, (g) => {
              goal = g;
              this.goalChanged(session.id, g);
            })
          : undefined,
        await mcpTools(this.mcp, config),
      ),
      this.gate,
      span,
    );
    const system = this.systemFor(session, registry, () => goal);
    const lite = config.slots.lite ? own(config.models, config.slots.lite) : undefined;
    const summarizing = lite
      ? { modelId: config.slots.lite ?? null, entry: lite }
      : { modelId, entry };
    const summarizer = {
      provider: meter.wrap(this.provider(summarizing.entry, config), {
        ...summarizing,
        purpose: 'compaction',
      }),
      model: summarizing.entry.model,
      contextWindow: summarizing.entry.context_window ?? 128_000,
    };
    return runLoop({
      meter,
      config: this.config,
      origin: req.origin,
      db: this.db,
      paths: this.paths,
      turnId: req.turn_id,
      session,
      provider,
      model: entry.model,
      maxOutputTokens: entry.max_output_tokens,
      vision: takesImages(entry),
      system,
      registry,
      signal,
      maxSteps: config.agent.max_steps,
      publish,
      cut,
      beforeStep: async (systemText, window) => {
        const done = await maybeCompact({
          window,
          db: this.db,
          paths: this.paths,
          sessionId: session.id,
          contextWindow: entry.context_window ?? 128_000,
          summarizer,
          signal,
          systemChars: systemText.length,
        });
        if (done) publish('turn.compacted', done);
      },
    });
  }

  /** The system prompt of a step: profile, memory, tools and skills read fresh each time. */
  private systemFor(
    session: Session,
    registry: ToolRegistry,
    goal: () => Goal | undefined,
  ): () => string {
    const toolNames = registry.specs().map((t) => t.name);
    return () =>
      systemPrompt({
        soul: readOptional(this.paths.soul, PROFILE_CAP),
        user: readOptional(this.paths.user, PROFILE_CAP),
        memoryIndex: readOptional(join(this.paths.memoryDir, 'MEMORY.md'), MEMORY_INDEX_CAP),
        tools: toolNames,
        skills: usableSkills(this.db, this.paths).map((k) => ({
          name: k.name,
          description: k.description,
        })),
        goal: goal(),
        workingDir: session.working_dir,
      });
  }

  /** A workflow run's turn: its steps instead of one prompt, through the same tools and gate. */
  private workflowTurn(
    req: TurnRequest,
    runId: string,
    session: Session,
    { signal, publish, meter, span }: TurnTools,
    cut: (reply: CutReply) => void,
  ) {
    const config = this.config();
    const registry = new ToolRegistry(this.tools(), this.gate, span);
    return runWorkflowTurn(
      {
        db: this.db,
        paths: this.paths,
        turnId: req.turn_id,
        runId,
        session,
        registry,
        signal,
        maxSteps: config.agent.max_steps,
        system: this.systemFor(session, registry, () => undefined),
        model: (slot) => {
          // A step on the lite slot falls back to the session's model when no lite model is set.
          const id =
            (slot === 'lite' ? config.slots.lite : undefined) ??
            (slot === 'default'
              ? config.slots.default
              : (session.model_id ?? config.slots.default));
          const entry = id ? own(config.models, id) : undefined;
          if (!entry)
            throw new TurnFailure(
              'no_model',
              'No model is configured for this workflow step: add a model entry and put it in the default slot.',
            );
          return {
            provider: meter.wrap(this.provider(entry, config), { modelId: id ?? null, entry }),
            model: entry.model,
            maxOutputTokens: entry.max_output_tokens,
            vision: takesImages(entry),
          };
        },
        publish,
        announce: workflowAnnounce(this.publish, req.turn_id),
        meter,
        cut,
      },
      req.message.text,
    ).catch((err: unknown) => {
      throw err instanceof WorkflowFailure ? new TurnFailure(err.reason, err.message) : err;
    });
  }

  /** Counts the turn against the goal; one still active after it gets another turn (the supervisor reads it). */
  private afterTurn(
    req: TurnRequest,
    outcome: {
      usage: { input: number; output: number; cachedInput: number; cacheWrite: number };
      toolCalls: number;
    },
    publish: TurnPublish,
  ): void {
    const input = outcome.usage.input + outcome.usage.cachedInput + outcome.usage.cacheWrite;
    let goal = addGoalUsage(this.db, req.session_id, {
      input_tokens: input,
      output_tokens: outcome.usage.output,
      turns: 1,
    });
    if (!goal) return;
    if (goal.status === 'active' && req.origin === 'goal' && outcome.toolCalls === 0) {
      // A continuation that did nothing but talk is not progress: stop and wait for the user.
      goal = putGoal(this.db, req.session_id, { status: 'paused' });
      publish('goal.paused', { reason: 'no_progress' });
    }
    this.goalChanged(req.session_id, goal);
  }

  private goalChanged(sessionId: string, goal: Goal): void {
    this.publish(`session:${sessionId}`, 'goal.updated', goalSummary(goal));
  }

  private provider(entry: ModelEntry, config: Config): Provider {
    const r = resolveModel(entry);
    if (!r.base_url)
      throw new TurnFailure('no_model', `The model entry for ${entry.model} has no base_url.`);
    redact(r.api_key);
    return createProvider(
      { protocol: r.protocol, baseUrl: r.base_url, apiKey: r.api_key, providerId: entry.provider },
      { stallTimeoutMs: config.agent.stall_seconds * 1000 },
    );
  }
}

/** Provider keys (configured or from the environment): commands the agent runs must not see them. */
function providerSecrets(config: Config): string[] {
  return Object.values(config.models)
    .map((e) => resolveModel(e).api_key)
    .filter((k): k is string => typeof k === 'string' && k.length > 0);
}

/** Writes a turn's end; a failure to (a full disk) is logged, never thrown past the turn. */
function record(turnId: string, write: () => unknown): void {
  try {
    write();
  } catch (err) {
    log.warn('could not record the end of a turn', { turn: turnId, error: (err as Error).message });
  }
}

/** The end of a turn that threw: why, in words a person can act on, and the budget it hit. */
function failedEnd(err: unknown, turnId: string, home: string): TurnEnd {
  const { reason, message, budget } = describe(err, home);
  if (reason === 'internal') log.error('turn failed', { turn: turnId, error: message });
  else if (reason === DISK_FULL_REASON)
    log.warn('a turn failed: the disk is full', { turn: turnId });
  return { status: 'failed', reason, message, ...(budget ? { budget: budgetView(budget) } : {}) };
}

/** The end of a stopped turn: by the user, or by a restart past its drain bound. */
function interruptedEnd(signal: AbortSignal): TurnEnd {
  return signal.reason instanceof RestartInterrupt
    ? { status: 'interrupted', reason: 'restarted', message: signal.reason.message }
    : { status: 'interrupted' };
}

const turnRef = (req: TurnRequest) => ({
  id: req.turn_id,
  session_id: req.session_id,
  origin: req.origin,
});

function describe(
  err: unknown,
  home: string,
): { reason: string; message: string; budget?: BudgetRefusal } {
  if (err instanceof BudgetExceeded)
    return { reason: 'budget_exceeded', message: err.message, budget: err.refusal };
  if (isDiskFull(err)) return { reason: DISK_FULL_REASON, message: diskFullMessage(home) };
  if (err instanceof TurnFailure) return { reason: err.reason, message: err.message };
  if (err instanceof ProviderError) return { reason: `provider_${err.kind}`, message: err.message };
  return { reason: 'internal', message: (err as Error)?.message ?? String(err) };
}

/** A refusal as the turn.failed event carries it (the message is the event's own). */
function budgetView(b: BudgetRefusal) {
  const { message: _message, ...rest } = b;
  return rest;
}

/** Profile and memory files are the user's to grow; the prompt takes at most this much of each. */
const PROFILE_CAP = 16_000;
const MEMORY_INDEX_CAP = 8_000;

function readOptional(file: string, cap: number): string | undefined {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length > cap ? `${text.slice(0, cap)}\n[… cut at ${cap} characters]` : text;
  } catch {
    return undefined;
  }
}
