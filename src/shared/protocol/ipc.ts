import { lazyEntries } from './lazy.js';
import { z } from 'zod';
import { ipcErrorCodes } from '../errors.js';
import { configSchema, modelEntrySchema, modelIdSchema, slotNames } from '../config/schema.js';
import { budgetsObjectSchema } from '../config/budgets.js';
import { mcpEventMakers, mcpRequestMakers, mcpResourceRef } from './mcp.js';
import { BackupResult, backupRequestMakers } from './backup.js';
import { cronEventMakers, cronRequestMakers } from './cron.js';
import { channelsDeliverMakers } from './channels-deliver.js';
import { sandboxStatusSchema } from '../sandbox/status.js';
import { indexStateSchema } from '../store/search.js';
import { channelsRequestMakers } from './channels.js';
import { browserRequestMakers } from './browser.js';
import { versionInfoSchema } from './version.js';
import { traceparentSchema } from './trace-context.js';
import { approvalDecision, interruptResult, modelTestResult, pendingApprovals } from './answers.js';
import { attachmentSchema } from './message-content.js';
import { deltaDataShape } from './delta.js';
import { deltaTypes } from './event-names.js';

export {
  upgradeProgressSchema,
  versionInfoSchema,
  type UpgradeProgress,
  type VersionInfo,
} from './version.js';

/**
 * The one IPC protocol between svc's processes. Every message is an element of `ipcMessage`:
 * a request (`kind:"req"`), its response (`kind:"res"`), or an event (`kind:"event"`).
 * Requests carry a correlation id and an absolute deadline; the receiver validates every message
 * and drops what does not parse.
 */

export const roles = [
  'supervisor',
  'gateway',
  'agent',
  'channels',
  'cron',
  'mcp',
  'browser',
] as const;
export const roleSchema = z.enum(roles);
export type Role = z.infer<typeof roleSchema>;
export type ChildRole = Exclude<Role, 'supervisor'>;

export const uwsFlavour = z.enum(['native', 'fallback']);
/** The gateway's HTTP engine: native uWebSockets.js, or node:http + ws (src/gateway/engine). */
export const httpEngineName = z.enum(['uws', 'node']);

const processStatus = z.object({
  role: roleSchema,
  pid: z.number().int(),
  state: z.enum([
    'starting',
    'running',
    'draining',
    'stopping',
    'backoff',
    'crash_loop',
    'exited',
    'unresponsive',
  ]),
  uptime_s: z.number(),
  restarts: z.number().int(),
  rss_bytes: z.number().int().nullable(),
  /** CPU time used since the process started (user + system); absent when it did not answer. */
  cpu_seconds: z.number().nullable().optional(),
  inflight_turns: z.number().int(),
  /** V8 heap in use (garbage included); absent when it did not answer. */
  heap_used_bytes: z.number().int().nullable().optional(),
  /** What the process keeps, by name (the gateway: /ws topics and kept events); absent when none. */
  counters: z.record(z.string(), z.number()).optional(),
  last_exit: z.string().nullable(),
  /** For a child that is down: when its next start is tried (null while one is starting). */
  next_try_at: z.string().nullable().optional(),
});
export type ProcessStatus = z.infer<typeof processStatus>;

export const statusSchema = z.object({
  version: z.string(),
  /** `degraded`: the supervisor runs but no gateway serves (see the gateway's row for why). */
  state: z.enum(['starting', 'running', 'degraded', 'draining', 'restarting', 'stopping']),
  started_at: z.string(),
  home: z.string(),
  addr: z.string().nullable(),
  url: z.string().nullable(),
  /** Kept for older clients: "native" on the uWS engine, null on the Node engine. */
  uws: uwsFlavour.nullable(),
  engine: httpEngineName.nullable(),
  restarts: z.number().int(),
  last_restart_error: z.string().nullable(),
  processes: z.array(processStatus),
  /** Whether terminal commands run in the OS sandbox, and if not why and the fix. */
  sandbox: sandboxStatusSchema.optional(),
  /** Scheduled backups and the last backup made (scheduled or asked for). */
  backup: z.object({ schedule: z.string().nullable(), last: BackupResult.nullable() }).optional(),
  /** The search index: ready, or still indexing what was written before it existed. */
  search: indexStateSchema.optional(),
  /** Search by meaning: the embeddings slot's model and how many messages wait for it; null: no slot. */
  semantic: z
    .object({ model_id: z.string(), waiting: z.number().int().min(0) })
    .nullable()
    .optional(),
});
export type Status = z.infer<typeof statusSchema>;

const listen = z.object({ host: z.string(), port: z.number().int().min(0).max(65535) });

/**
 * A gateway's /ws numbering, passed from the old gateway to its successor on a restart so that
 * clients resume with `since` as across a dropped connection: the epoch, and per topic its last
 * seq and the newest frames it keeps for replay.
 */
export const wsStateSchema = z.object({
  epoch: z.string().min(1).max(64),
  topics: z.array(
    z.object({
      topic: z.string().min(1).max(200),
      seq: z.number().int().min(0),
      frames: z.array(z.object({ seq: z.number().int().min(1), frame: z.string() })),
    }),
  ),
  /** Where a forgotten topic's numbering starts again (above every seq it ever gave). */
  floor: z.number().int().min(0).optional(),
});
export type WsState = z.infer<typeof wsStateSchema>;

/** A change to a model entry: a field set to null is removed. */
export const modelPatchSchema = z
  .object({
    provider: modelEntrySchema.shape.provider,
    model: modelEntrySchema.shape.model,
    protocol: modelEntrySchema.shape.protocol.unwrap().nullable(),
    base_url: modelEntrySchema.shape.base_url.unwrap().nullable(),
    api_key: modelEntrySchema.shape.api_key.unwrap().nullable(),
    context_window: modelEntrySchema.shape.context_window.unwrap().nullable(),
    max_output_tokens: modelEntrySchema.shape.max_output_tokens.unwrap().nullable(),
    vision: modelEntrySchema.shape.vision.unwrap().nullable(),
    prices: modelEntrySchema.shape.prices.unwrap().nullable(),
  })
  .partial()
  .strict();

const ack = z.object({});

/** The MCP resources a person attaches to a message, at most. */
export const MAX_ATTACHED_RESOURCES = 10;

/**
 * What a user sends in a turn: text, names of files uploaded with POST /api/upload, and MCP
 * resources ({server, uri}) whose contents are read and given to the model with the text.
 */
export const turnMessageSchema = z.object({
  text: z.string().max(200_000),
  attachments: z.array(z.string().min(1).max(255)).max(20).default([]),
  resources: z.array(mcpResourceRef).max(MAX_ATTACHED_RESOURCES).optional(),
});
export type TurnMessage = z.infer<typeof turnMessageSchema>;

/**
 * A turn's message as it travels in `turn.start` and `agent.turn`: where the turn came in (the
 * gateway, a channel, a schedule) the session was found and each attachment resolved to its
 * upload on record, so the agent worker takes it as it is.
 */
export const turnInputSchema = turnMessageSchema.extend({
  attachments: z
    .array(
      attachmentSchema.extend({
        name: z.string().min(1).max(255),
        original_name: z.string(),
        path: z.string().startsWith('/'),
      }),
    )
    .max(20)
    .default([]),
});
export type TurnInput = z.infer<typeof turnInputSchema>;
export { approvalDecision };
export type ApprovalDecision = z.infer<typeof approvalDecision>;
export const turnOrigin = z.enum(['http', 'ws', 'goal', 'cron', 'channel', 'workflow']);
/** A workflow run's turn carries the run's id: the worker runs its steps instead of one prompt. */
const workflowRunId = z
  .string()
  .regex(/^wr_[a-z0-9]{21}$/)
  .optional();
export type TurnOrigin = z.infer<typeof turnOrigin>;

/** Requests: the payload the sender gives and the result the receiver answers. */
/** A tool's default (what a call gets when no rule decides), where it comes from, and whether it can be switched. */
export const toolPermission = z.object({
  default: z.enum(['allow', 'ask', 'deny']),
  source: z.enum(['built-in', 'permissions.yml']),
  locked: z.string().nullable(),
});

export const requestMakers = {
  /** supervisor → child, first message after spawn. */
  'child.start': () => ({
    payload: z.object({
      config: configSchema,
      access_key: z.string().optional(),
      listen: listen.optional(),
      /** When svc started (ms since the epoch): /api/health's uptime counts from it, not from this gateway. */
      started_at: z.number().int().positive().optional(),
      /** The previous gateway's /ws numbering, on a restart. */
      ws_state: wsStateSchema.optional(),
    }),
    result: z.object({
      port: z.number().int().optional(),
      uws: uwsFlavour.optional(),
      engine: httpEngineName.optional(),
    }),
  }),
  /** supervisor → child: what `svc status` shows about it. */
  'child.stats': () => ({
    payload: z.object({}),
    result: z.object({
      rss_bytes: z.number().int(),
      cpu_seconds: z.number().optional(),
      inflight_turns: z.number().int(),
      heap_used_bytes: z.number().int().optional(),
      counters: z.record(z.string(), z.number()).optional(),
    }),
  }),
  /** supervisor → every child, each second: liveness (a child that stops answering is killed and replaced). */
  'child.ping': () => ({ payload: z.object({}), result: z.object({}) }),
  /** supervisor → old gateway once its successor listens: stop accepting, finish, exit. */
  'gateway.handover': () => ({
    payload: z.object({}),
    result: z.object({ open_connections: z.number().int() }),
  }),
  /**
   * supervisor → old gateway, on a restart before its successor starts: its /ws numbering; from
   * then on it numbers nothing and sends what it would publish to the supervisor (`ws.publish`),
   * which passes it to the successor, until a `server.resumed` gives it back.
   */
  'gateway.ws_state': () => ({ payload: z.object({}), result: wsStateSchema }),
  /** supervisor → gateway, before a restart: send the listening socket (a `gateway.listener` event) when the engine cannot share its port. */
  'gateway.listener': () => ({
    payload: z.object({}),
    result: z.object({ sent: z.boolean() }),
  }),
  /** child → supervisor. */
  'supervisor.status': () => ({ payload: z.object({}), result: statusSchema }),
  /** gateway → supervisor: POST /api/restart. */
  'supervisor.restart': () => ({
    payload: z.object({ reason: z.string().max(200) }),
    result: z.object({ accepted: z.boolean(), state: z.string() }),
  }),
  /** gateway → supervisor: GET /api/version. */
  'version.info': () => ({ payload: z.object({}), result: versionInfoSchema }),
  /** gateway → supervisor: POST /api/version/upgrade; refused while one runs or on a development build. */
  'version.upgrade': () => ({
    payload: z.object({}),
    result: z.object({
      accepted: z.boolean(),
      reason: z.enum(['running', 'dev_build']).nullable(),
    }),
  }),
  /** gateway → supervisor: config.yml edits; the supervisor alone writes the file. */
  'config.models.create': () => ({
    payload: z.object({
      id: modelIdSchema,
      entry: modelEntrySchema,
      /** Another entry whose saved key the new one uses (same provider); the gateway never reads it. */
      key_from: modelIdSchema.optional(),
    }),
    result: ack,
  }),
  'config.models.update': () => ({
    payload: z.object({ id: modelIdSchema, patch: modelPatchSchema }),
    result: ack,
  }),
  'config.models.delete': () => ({ payload: z.object({ id: modelIdSchema }), result: ack }),
  /** gateway → supervisor: replace `budgets:` in config.yml. */
  'config.budgets.set': () => ({
    payload: z.object({ budgets: budgetsObjectSchema.partial() }),
    result: ack,
  }),
  'config.slots.set': () => ({
    payload: z.object({ slot: z.enum(slotNames), model_id: modelIdSchema.nullable() }),
    result: ack,
  }),
  /** gateway → agent: the smallest real request to a provider, for POST /api/config/test. */
  'agent.probe_model': () => ({
    payload: z.object({
      provider: z.string(),
      protocol: z.enum(['openai', 'anthropic']),
      base_url: z.string().url(),
      api_key: z.string().optional(),
      model: z.string().min(1),
    }),
    result: modelTestResult,
  }),
  /**
   * gateway, channels, cron, agent (workflow runs) → supervisor: run a turn in a session the
   * sender found. Answers once a worker took it; the turn's events follow on session:<id>.
   */
  'turn.start': () => ({
    payload: z.object({
      session_id: z.string(),
      message: turnInputSchema,
      origin: turnOrigin,
      workflow_run_id: workflowRunId,
      /** The caller's span (telemetry.otlp configured): the turn's spans go under it. */
      traceparent: traceparentSchema.optional(),
    }),
    result: z.object({ turn_id: z.string() }),
  }),
  /** gateway → supervisor: stop the session's running turn. */
  'turn.interrupt': () => ({
    /** `wait`: answer once the turn has ended (a session about to be deleted), not once the worker was told. */
    payload: z.object({ session_id: z.string(), wait: z.boolean().optional() }),
    result: interruptResult,
  }),
  /** supervisor → agent: run this turn; answers once its row is written, the outcome comes as its end event on session:<id>. */
  'agent.turn': () => ({
    payload: z.object({
      turn_id: z.string(),
      session_id: z.string(),
      message: turnInputSchema,
      origin: turnOrigin,
      workflow_run_id: workflowRunId,
      /** The supervisor's span of the turn: the worker's spans go under it. */
      traceparent: traceparentSchema.optional(),
    }),
    result: z.object({ accepted: z.literal(true) }),
  }),
  /** gateway → supervisor → the agent running the session's turn: the user's answer to an approval. */
  'approval.answer': () => ({
    payload: z.object({
      session_id: z.string(),
      approval_id: z.string().max(64),
      decision: approvalDecision,
    }),
    result: z.object({ answered: z.boolean() }),
  }),
  /** gateway → supervisor → the session's agent: approvals waiting for the user (a reloaded page asks). */
  'approval.list': () => ({
    payload: z.object({ session_id: z.string() }),
    result: pendingApprovals,
  }),
  'agent.approvals': () => ({
    payload: z.object({ session_id: z.string() }),
    result: pendingApprovals,
  }),
  'agent.approval': () => ({
    payload: z.object({
      session_id: z.string(),
      approval_id: z.string().max(64),
      decision: approvalDecision,
    }),
    result: z.object({ answered: z.boolean() }),
  }),
  /** gateway → agent: the tools with their JSON schemas, purposes and defaults, for GET /api/tools. */
  'agent.tools': () => ({
    payload: z.object({}),
    result: z.object({
      /** permissions.yml cannot be used as it is (the switches are off until it is fixed). */
      rules_problem: z.string().nullable(),
      items: z.array(
        z.object({
          name: z.string(),
          purpose: z.string(),
          description: z.string(),
          parameters: z.record(z.string(), z.unknown()),
          permission: toolPermission,
        }),
      ),
    }),
  }),
  /** gateway → agent: make allow or ask a tool's default in permissions.yml (refused for locked tools). */
  'agent.tool_default': () => ({
    payload: z.object({ tool: z.string().max(200), default: z.enum(['allow', 'ask']) }),
    result: toolPermission,
  }),
  /** supervisor → an idle agent worker: may it retire? It says no while a background command runs, and takes no new work once it says yes. */
  'agent.retire': () => ({
    payload: z.object({}),
    result: z.object({ retired: z.boolean(), why: z.string().optional() }),
  }),
  'agent.interrupt': () => ({
    payload: z.object({ turn_id: z.string(), restart: z.boolean().optional() }),
    result: z.object({ interrupted: z.boolean() }),
  }),
  /** any → worker: a round trip used by health probes and tests. */
  'worker.echo': () => ({
    payload: z.object({ text: z.string().max(10_000) }),
    result: z.object({ text: z.string(), role: roleSchema, pid: z.number().int() }),
  }),
  ...mcpRequestMakers,
  ...cronRequestMakers,
  ...backupRequestMakers,
  /** Messaging channels (gateway → supervisor → channels worker); channels.deliver also from cron. */
  ...channelsRequestMakers,
  ...channelsDeliverMakers,
  /** The browser (gateway/agent → browser worker; config.browser.set → supervisor). */
  ...browserRequestMakers,
} as const;
export const requestDefs = lazyEntries(requestMakers);

export type RequestType = keyof typeof requestDefs;
export type PayloadOf<T extends RequestType> = z.infer<(typeof requestDefs)[T]['payload']>;
export type ResultOf<T extends RequestType> = z.infer<(typeof requestDefs)[T]['result']>;

const requestTypes = Object.keys(requestDefs) as [RequestType, ...RequestType[]];

/**
 * A request's envelope; its payload is checked against its type's schema after (`ipcMessage`).
 * One envelope for all types rather than an object per type: a union of ~110 variants built ~1,100
 * zod schemas in every process at start, a fifth of what each built before it could serve.
 */
const requestEnvelope = z.object({
  kind: z.literal('req'),
  id: z.string().min(1).max(64),
  type: z.enum(requestTypes),
  to: roleSchema,
  deadline: z.number().int().positive(),
  payload: z.unknown(),
});

export const ipcErrorSchema = z.object({
  // A code this build does not know (none should arrive: all processes are one build) reads as internal.
  code: z.enum(ipcErrorCodes).catch('internal'),
  message: z.string(),
  details: z.unknown().optional(),
});

const responseSchema = z.object({
  kind: z.literal('res'),
  re: z.string().min(1).max(64),
  ok: z.boolean(),
  result: z.unknown().optional(),
  error: ipcErrorSchema.optional(),
});

/** Events: fire-and-forget notices. */
export const eventMakers = {
  /** child → supervisor: its handlers are in place; messages sent before this are held back. */
  'child.ready': () => z.object({ role: roleSchema, pid: z.number().int() }),
  /** supervisor → children: refuse new work with 503 until replaced. */
  'server.draining': () => z.object({ retry_after_s: z.number().int().positive() }),
  /** supervisor → children: a restart was abandoned (e.g. the new config is invalid); take work again. */
  'server.resumed': () => z.object({ reason: z.string() }),
  /** supervisor → children: config.yml changed through the API; this is the new effective config. */
  'config.changed': () => z.object({ config: configSchema }),
  /** supervisor → cron: a turn is over (the supervisor heard its end event, or ended it itself). */
  'turn.ended': () =>
    z.object({
      turn_id: z.string(),
      session_id: z.string(),
      status: z.enum(['completed', 'failed', 'interrupted']),
    }),
  /** gateway → supervisor → the next gateway: carries the listening socket as the message's IPC handle. */
  'gateway.listener': () => z.object({}),
  /**
   * worker → supervisor: the process groups its commands run in, after each change; the
   * supervisor kills those still listed when the worker dies, however it dies.
   */
  'child.process_groups': () => z.object({ pgids: z.array(z.number().int().min(2)).max(4096) }),
  /**
   * agent → supervisor → gateway: a piece of a turn's streamed text, merged by the agent's
   * batcher (the only one). Its own event so that the IPC parse at each hop is its one check:
   * the supervisor reads the text it keeps from it, the gateway sends it as it is.
   */
  'ws.delta': () =>
    z.object({
      topic: z.string().startsWith('session:').max(200),
      type: z.enum(deltaTypes),
      ...deltaDataShape,
    }),
  /** any → gateway: publish to WebSocket subscribers of a topic. */
  'ws.publish': () =>
    z.object({
      topic: z.string().min(1).max(200),
      type: z.string().min(1).max(100),
      data: z.unknown(),
    }),
  ...mcpEventMakers,
  ...cronEventMakers,
} as const;
export const eventDefs = lazyEntries(eventMakers);

export type EventType = keyof typeof eventDefs;
export type EventPayload<T extends EventType> = z.infer<(typeof eventDefs)[T]>;

const eventTypes = Object.keys(eventDefs) as [EventType, ...EventType[]];
const eventEnvelope = z.object({
  kind: z.literal('event'),
  type: z.enum(eventTypes),
  payload: z.unknown(),
});

/** Every IPC message: the envelope by `kind`, then the payload by its request or event type. */
/** The id of a request whose envelope is sound (its payload may not be), so it can be refused instead of left waiting. */
export function requestIdOf(raw: unknown): string | null {
  const r = requestEnvelope.safeParse(raw);
  return r.success ? r.data.id : null;
}

export const ipcMessage = z
  .discriminatedUnion('kind', [requestEnvelope, responseSchema, eventEnvelope])
  .transform((msg, ctx) => {
    if (msg.kind === 'res') return msg;
    const schema: z.ZodType =
      msg.kind === 'req' ? requestDefs[msg.type].payload : eventDefs[msg.type];
    const payload = schema.safeParse(msg.payload);
    if (payload.success) return { ...msg, payload: payload.data };
    for (const issue of payload.error.issues)
      ctx.addIssue({ ...issue, path: ['payload', ...issue.path] } as z.core.$ZodRawIssue);
    return z.NEVER;
  });

export type IpcRequest = {
  kind: 'req';
  id: string;
  type: RequestType;
  to: Role;
  deadline: number;
  payload: unknown;
};
export type IpcResponse = z.infer<typeof responseSchema>;
/** Narrowing on `type` gives the payload its schema's type. */
export type IpcEvent = {
  [K in EventType]: { kind: 'event'; type: K; payload: EventPayload<K> };
}[EventType];
export type IpcMessage = IpcRequest | IpcResponse | IpcEvent;
export type IpcError = z.infer<typeof ipcErrorSchema>;
