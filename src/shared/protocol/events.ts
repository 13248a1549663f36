import { lazyEntries } from './lazy.js';
import { firstIssue } from '../errors.js';
import { z } from 'zod';
import { channelStatusSchema, loginStateSchema } from './channels.js';
import { upgradeProgressSchema, versionInfoSchema } from './version.js';
import { topicKindOf, type TopicKind, type TopicName } from './event-names.js';
import { budgetScopeSchema, budgetStateSchema } from './budget-state.js';
import { deltaDataShape } from './delta.js';

/**
 * The catalogue of `/ws` events: every event type, the topics it goes to and the schema of its
 * `data`. Publishers are type-checked against it (see ws-publish.ts), the gateway checks what
 * other processes send against it, the Web UI imports its types (type-only, so nothing of it is
 * bundled), and GET /api/openapi.json lists it. This file imports zod and node-free schemas only:
 * the Web UI's type check reads it.
 *
 * Every event but a streamed delta is at most WS_EVENT_MAX_BYTES as a frame: events carry ids
 * and summaries (a cut text says `truncated: true`), and a client fetches the rest over REST.
 */

export {
  deltaTypes,
  isDelta,
  topicKindOf,
  topicKinds,
  WS_EVENT_MAX_BYTES,
  type TopicKind,
  type TopicName,
} from './event-names.js';

/* ---------- shared pieces ---------- */

/** Set when a text or value in the event was cut to keep it small; the REST route named in the event's description has it whole. */
const truncated = z
  .literal(true)
  .optional()
  .describe('present (true) when a text in this event was cut; fetch the whole over REST');

export const sessionSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    model_id: z.string().nullable(),
    reasoning_effort: z.string(),
    show_reasoning: z.boolean(),
    permission_mode: z.string(),
    working_dir: z.string().nullable(),
    /** The sandbox network: on, off or a host list; null follows permissions.yml. */
    network: z.union([z.enum(['on', 'off']), z.array(z.string())]).nullable(),
    channel: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    message_count: z.number().int(),
  })
  .meta({ id: 'Session' });
export type SessionView = z.infer<typeof sessionSchema>;

export const goalSchema = z
  .object({
    session_id: z.string(),
    objective: z.string(),
    status: z.string(),
    token_budget: z.number().nullable(),
    usage: z.object({ input_tokens: z.number(), output_tokens: z.number(), turns: z.number() }),
    created_at: z.string(),
    updated_at: z.string(),
    truncated,
  })
  .meta({ id: 'Goal' });
export type GoalView = z.infer<typeof goalSchema>;

/**
 * A committed message. `content` is the stored content (see message-content.ts) with long texts
 * cut when `truncated` is set: GET /api/sessions/{id}/messages/{message_id} answers it whole.
 */
export const messageSummarySchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    seq: z.number().int(),
    role: z.enum(['user', 'assistant', 'tool', 'system']),
    content: z.unknown(),
    created_at: z.string(),
    truncated,
  })
  .meta({ id: 'Message' });
export type MessageSummary = z.infer<typeof messageSummarySchema>;

export const artifactSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    path: z.string(),
    size: z.number(),
    mime: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Artifact' });

const usageSchema = z.object({
  input: z.number(),
  output: z.number(),
  cachedInput: z.number(),
  cacheWrite: z.number(),
  reasoning: z.number().optional(),
});

export const trashItemSchema = z.object({
  id: z.string(),
  kind: z.string(),
  name: z.string(),
  original: z.string().optional(),
  size_bytes: z.number().optional(),
  deleted_at: z.string().optional(),
  expires_at: z.string().optional(),
});
export type TrashItemView = z.infer<typeof trashItemSchema>;

/** A graph task or a cron task as the tasks API shows it, its long texts cut (GET /api/tasks/{id} has them whole). */
const taskSummarySchema = z.looseObject({
  id: z.string(),
  kind: z.string(),
  truncated,
  restored: z.boolean().optional(),
});
const runViewSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  trigger: z.string(),
  scheduled_for: z.string().nullable(),
  status: z.string(),
  session_id: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  error: z.string().nullable(),
  notify_results: z.array(
    z.looseObject({ platform: z.string(), chat_id: z.string(), ok: z.boolean() }),
  ),
  approvals: z.array(z.looseObject({ approval_id: z.string(), tool: z.string() })),
});
const runEvent = z.object({
  task_id: z.string(),
  run: runViewSchema,
  next_run_at: z.string().nullable(),
  truncated,
});

/** A skill as GET /api/skills lists it (src/shared/skills/catalog.ts). */
export const skillInfoSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    source: z.enum(['builtin', 'user']),
    enabled: z.boolean(),
    valid: z.boolean(),
    /** Why the skill is invalid (null when valid); an invalid skill is never offered to the model. */
    why: z.string().nullable(),
    file_count: z.number(),
    size_bytes: z.number(),
  })
  .meta({ id: 'Skill' });

/** An MCP server's state; GET /api/mcp/servers/{name} lists its tools. */
export const mcpStatusSummarySchema = z.object({
  name: z.string(),
  status: z.enum(['connecting', 'connected', 'error', 'disabled']),
  error: z.string().nullable(),
  connected_at: z.string().nullable(),
  transport: z.enum(['stdio', 'streamable_http', 'sse']).nullable(),
  needs_auth: z.boolean(),
  tool_count: z.number().int(),
  /** The last lines a failed stdio server wrote to stderr (masked), or null. */
  stderr_tail: z.string().nullable(),
});

export const pairingSchema = z.object({
  code: z.string(),
  platform: z.string(),
  user_id: z.string(),
  chat_id: z.string(),
  name: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  created_at: z.string(),
  answered_at: z.string().nullable(),
});
/** A pairing request, as GET /api/channels/{platform}/pairings lists it and channels.pairing carries it. */
export type PairingView = z.infer<typeof pairingSchema>;

/** The onboarding states, in order (src/shared/onboarding.ts works them out). */
export const onboardingStates = [
  'no_model',
  'model_configured',
  'model_tested',
  'profile_written',
  'done',
] as const;
export const onboardSchema = z.object({
  state: z.enum(onboardingStates),
  steps: z.object({
    model_configured: z.boolean(),
    model_tested: z.boolean(),
    profile_written: z.boolean(),
    completed: z.boolean(),
  }),
  default_model: z.string().nullable(),
  last_test: z
    .object({ ok: z.boolean(), at: z.string(), reason: z.string().optional() })
    .nullable(),
  completed_at: z.string().nullable(),
  can_complete: z.boolean(),
  next: z.string(),
});

const budgetRefusalSchema = z.object({
  scope: budgetScopeSchema,
  key: z.string(),
  unit: z.enum(['usd', 'tokens']),
  limit: z.number(),
  spent: z.number(),
  estimate: z.number(),
  resets_at: z.string().nullable(),
});

const turnId = { turn_id: z.string() };
const callId = { call_id: z.string() };
const workflowBase = {
  turn_id: z.string(),
  run_id: z.string(),
  workflow: z.string(),
  session_id: z.string(),
};
const stepKind = z.enum(['prompt', 'run', 'tool']);

/* ---------- the catalogue ---------- */

interface EventSpec {
  topics: readonly TopicKind[];
  summary: string;
  data: z.ZodType;
}

function ev<const K extends readonly TopicKind[], S extends z.ZodType>(
  topics: K,
  summary: string,
  data: S,
): { topics: K; summary: string; data: S } {
  return { topics, summary, data };
}

export const wsEventMakers = {
  // server
  hello: () =>
    ev(
      ['server'],
      'Sent once on connect (seq 0): the version, the numbering epoch (same across a restart) and whether the client is local.',
      z.object({ version: z.string(), epoch: z.string(), local: z.boolean() }),
    ),
  draining: () =>
    ev(
      ['server'],
      'svc is restarting: new turns get 503 until it is back.',
      z.object({ retry_after_s: z.number() }),
    ),
  resumed: () =>
    ev(
      ['server'],
      'A restart was abandoned; turns are taken again.',
      z.object({ retry_after_s: z.number() }),
    ),
  'config.updated': () =>
    ev(
      ['server'],
      'The models or slots changed: reload GET /api/config/models.',
      z.object({
        slots: z.record(z.string(), z.string().nullable()).optional(),
        models: z.array(z.string()).optional(),
        removed: z.array(z.string()).optional(),
      }),
    ),
  'onboard.updated': () =>
    ev(
      ['server'],
      'First-run onboarding moved on: the status, or the result of a model test.',
      z.union([onboardSchema, z.object({ model_tested: z.boolean() })]),
    ),
  version: () =>
    ev(['server'], 'What the release check found (as GET /api/version).', versionInfoSchema),
  'usage.warning': () =>
    ev(
      ['server'],
      'A budget reached its warning share (budgets.warn_at, 80 % by default): sent once per limit and period.',
      budgetStateSchema,
    ),
  upgrade: () => ev(['server'], 'A step of a running upgrade.', upgradeProgressSchema),

  // sessions (the list) and session:<id>
  'session.created': () => ev(['sessions'], 'A session was created.', sessionSchema),
  'session.updated': () =>
    ev(['sessions', 'session'], "A session's settings or title changed.", sessionSchema),
  'session.deleted': () =>
    ev(
      ['sessions', 'session'],
      'A session went to the trash.',
      z.object({ id: z.string(), trash_id: z.string() }),
    ),
  'session.restored': () =>
    ev(['sessions', 'session'], 'A session came back from the trash.', sessionSchema),

  // one session's turns
  'turn.started': () =>
    ev(
      ['session'],
      "A turn began; `message` is the user's message as stored (cut when long).",
      z.object({
        ...turnId,
        session_id: z.string(),
        origin: z.string(),
        message: messageSummarySchema,
      }),
    ),
  'turn.text_delta': () =>
    ev(
      ['session'],
      'A piece of the reply as it streams (merged, at most one frame per topic per 16 ms). Exempt from the size cap.',
      z.object(deltaDataShape),
    ),
  'turn.reasoning_delta': () =>
    ev(
      ['session'],
      "A piece of the model's reasoning as it streams (when the session shows reasoning). Exempt from the size cap.",
      z.object(deltaDataShape),
    ),
  'turn.tool_call_started': () =>
    ev(
      ['session'],
      'The model began a tool call.',
      z.object({ ...turnId, index: z.number().int(), call_id: z.string(), name: z.string() }),
    ),
  'turn.tool_call': () =>
    ev(
      ['session'],
      'A tool call with its arguments (cut when long; the committed assistant message has them whole).',
      z.object({
        ...turnId,
        call_id: z.string(),
        name: z.string(),
        arguments: z.string(),
        truncated,
      }),
    ),
  'turn.tool_result': () =>
    ev(
      ['session'],
      'A tool call finished: `output` is cut when long (`truncated`); `message` is the stored tool message, whose whole content GET /api/sessions/{id}/messages/{message_id} answers.',
      z.object({
        ...turnId,
        call_id: z.string(),
        name: z.string(),
        output: z.string(),
        is_error: z.boolean(),
        truncated,
        message: messageSummarySchema,
      }),
    ),
  'turn.compacted': () =>
    ev(
      ['session'],
      'Older messages were summarised to keep the prompt bounded.',
      z.object({
        ...turnId,
        from_seq: z.number().int(),
        to_seq: z.number().int(),
        file: z.string(),
        requests: z.number().int(),
      }),
    ),
  'turn.completed': () =>
    ev(
      ['session'],
      'The turn ended well; `reply` is cut when long (`truncated`): GET /api/sessions/{id}/turns/{turn_id} answers it whole.',
      z.object({
        ...turnId,
        status: z.literal('completed'),
        stop_reason: z.string(),
        reply: z.string(),
        truncated,
        usage: usageSchema,
        steps: z.number().int(),
      }),
    ),
  'turn.failed': () =>
    ev(
      ['session'],
      'The turn failed: why (`reason`) and what to do (`message`); `budget` names the limit when `reason` is budget_exceeded.',
      z.object({
        ...turnId,
        status: z.literal('failed'),
        reason: z.string(),
        message: z.string(),
        budget: budgetRefusalSchema.optional(),
      }),
    ),
  'turn.interrupted': () =>
    ev(
      ['session'],
      'The turn was stopped (by the user, or `reason: restarted`).',
      z.object({
        ...turnId,
        status: z.literal('interrupted'),
        reason: z.string().optional(),
        message: z.string().optional(),
      }),
    ),
  'message.committed': () =>
    ev(
      ['session'],
      'A message was stored (cut when long, see `message.truncated`).',
      z.object({ ...turnId, message: messageSummarySchema }),
    ),
  'artifact.updated': () =>
    ev(
      ['session'],
      "A tool wrote a file; it is one of the session's artifacts.",
      z.object({ ...turnId, ...callId, artifact: artifactSchema }),
    ),
  'terminal.output': () =>
    ev(
      ['session'],
      'Live output of a running command, in pieces; `skipped` counts characters left out of a flood (the tool result has the output).',
      z.object({
        ...turnId,
        ...callId,
        stream: z.enum(['stdout', 'stderr']),
        chunk: z.string(),
        skipped: z.number().int().optional(),
      }),
    ),
  'approval.requested': () =>
    ev(
      ['session'],
      "A tool call waits for the user's decision; `input` is cut when long (`truncated`): GET /api/sessions/{id}/approvals has it whole.",
      z.object({
        ...turnId,
        ...callId,
        approval_id: z.string(),
        tool: z.string(),
        input: z.unknown(),
        reason: z.string(),
        sandbox_notice: z.string().optional(),
        expires_at: z.string().optional(),
        truncated,
      }),
    ),
  'approval.withdrawn': () =>
    ev(
      ['session'],
      'The turn ended while the approval waited.',
      z.object({ ...turnId, ...callId, approval_id: z.string() }),
    ),
  'approval.expired': () =>
    ev(
      ['session'],
      'Nobody answered in time: the call was denied.',
      z.object({ ...turnId, ...callId, approval_id: z.string(), timeout_seconds: z.number() }),
    ),
  'goal.updated': () =>
    ev(
      ['session'],
      "The session's goal changed (objective cut when long; GET /api/sessions/{id}/goal has it whole).",
      goalSchema,
    ),
  'goal.cleared': () =>
    ev(['session'], "The session's goal was removed.", z.object({ session_id: z.string() })),
  'goal.paused': () =>
    ev(
      ['session'],
      'Goal continuations stopped: `no_progress` or `max_continuations`.',
      z.object({
        turn_id: z.string().optional(),
        reason: z.string(),
        turns: z.number().int().optional(),
      }),
    ),

  // tasks
  'task.created': () =>
    ev(
      ['tasks'],
      'A task was created (or restored): GET /api/tasks/{id} has it whole.',
      taskSummarySchema,
    ),
  'task.updated': () => ev(['tasks'], 'A task changed.', taskSummarySchema),
  'task.deleted': () =>
    ev(
      ['tasks'],
      'A task was deleted (a cron task went to the trash).',
      z.object({
        id: z.string(),
        kind: z.string(),
        owner_session: z.string().nullable().optional(),
        name: z.string().optional(),
        trash_id: z.string().optional(),
      }),
    ),
  'task.run_started': () => ev(['tasks'], "A scheduled task's run began.", runEvent),
  'task.run_completed': () => ev(['tasks'], 'A run completed.', runEvent),
  'task.run_failed': () => ev(['tasks'], 'A run failed.', runEvent),
  'task.run_interrupted': () => ev(['tasks'], 'A run was interrupted.', runEvent),

  // workflows
  'workflow.run_started': () =>
    ev(
      ['workflows'],
      'A workflow run began: its inputs (cut when long) and steps.',
      z.object({
        ...workflowBase,
        inputs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
        steps: z.array(z.object({ id: z.string(), kind: stepKind, needs: z.array(z.string()) })),
        truncated,
      }),
    ),
  'workflow.step_started': () =>
    ev(
      ['workflows'],
      'A step began.',
      z.object({ ...workflowBase, step: z.string(), kind: stepKind }),
    ),
  'workflow.step_completed': () =>
    ev(
      ['workflows'],
      'A step completed; its output cut at 500 characters (GET /api/workflows/runs/{id}).',
      z.object({ ...workflowBase, step: z.string(), output: z.string() }),
    ),
  'workflow.run_completed': () =>
    ev(
      ['workflows'],
      'The run completed; each output cut (GET /api/workflows/runs/{id}).',
      z.object({ ...workflowBase, outputs: z.record(z.string(), z.string()), truncated }),
    ),
  'workflow.run_failed': () =>
    ev(
      ['workflows'],
      'The run failed or was stopped: the step, the reason and a message.',
      z.object({
        ...workflowBase,
        turn_id: z.string().optional(),
        step: z.string().nullable(),
        reason: z.string(),
        message: z.string(),
      }),
    ),

  // skills
  'skill.created': () =>
    ev(
      ['skills'],
      'A skill was imported or restored.',
      z.union([skillInfoSchema, z.object({ name: z.string(), restored: z.boolean().optional() })]),
    ),
  'skill.updated': () =>
    ev(
      ['skills'],
      'A skill was replaced by a forced import.',
      z.union([skillInfoSchema, z.object({ name: z.string() })]),
    ),
  'skill.toggled': () => ev(['skills'], 'A skill was enabled or disabled.', skillInfoSchema),
  'skill.deleted': () =>
    ev(
      ['skills'],
      'A skill went to the trash.',
      z.object({ name: z.string(), trash_id: z.string() }),
    ),

  // trash
  'trash.added': () =>
    ev(['trash'], 'Something went to the trash: the item without its contents.', trashItemSchema),
  'trash.restored': () =>
    ev(
      ['trash'],
      'An item was restored.',
      z.object({ id: z.string(), kind: z.string(), restored_to: z.string() }),
    ),
  'trash.deleted': () =>
    ev(['trash'], 'An item was deleted for good.', z.object({ id: z.string() })),
  'trash.emptied': () =>
    ev(['trash'], 'The trash was emptied.', z.object({ deleted: z.number().int() })),

  // mcp
  'mcp.config': () =>
    ev(
      ['mcp'],
      'MCP servers were added, changed or removed.',
      z.object({ names: z.array(z.string()) }),
    ),
  'mcp.status': () =>
    ev(
      ['mcp'],
      "A server's connection changed (GET /api/mcp/servers/{name} lists its tools).",
      mcpStatusSummarySchema,
    ),

  // channels
  'channels.changed': () =>
    ev(['channels'], "A platform's configuration changed.", z.object({ platform: z.string() })),
  'channels.status': () =>
    ev(['channels'], "A platform's adapter changed state.", channelStatusSchema),
  'channels.pairing': () =>
    ev(['channels'], 'Someone asked to pair, or a pairing was answered.', pairingSchema),
  'channels.login': () =>
    ev(
      ['channels'],
      'A QR login (WeChat, WhatsApp) moved on; without `qr_png` when `truncated` (GET /api/channels/{platform}/login has it).',
      loginStateSchema.extend({ truncated }),
    ),
} as const satisfies Record<string, () => EventSpec>;
export const wsEvents = lazyEntries(wsEventMakers);

export type WsEventType = keyof typeof wsEvents;
/** The data of an event type, as a publisher gives it. */
export type WsEventData<T extends WsEventType> = z.input<(typeof wsEvents)[T]['data']>;
/** The topics an event type may go to. */
export type WsTopicOf<T extends WsEventType> = TopicName<(typeof wsEvents)[T]['topics'][number]>;
/** Event types that go to a topic kind. */
export type WsEventTypeOn<K extends TopicKind> = {
  [T in WsEventType]: K extends (typeof wsEvents)[T]['topics'][number] ? T : never;
}[WsEventType];

/** One `/ws` event frame as a client receives it; narrowing on `type` gives `data` its shape. */
export type WsEventFrame = {
  [T in WsEventType]: {
    topic: WsTopicOf<T>;
    type: T;
    seq: number;
    data: z.output<(typeof wsEvents)[T]['data']>;
  };
}[WsEventType];

/** A typed publisher: a wrong topic, type or data shape is a compile error. */
export type Publish = <T extends WsEventType>(
  topic: WsTopicOf<T>,
  type: T,
  data: WsEventData<T>,
) => void;

/** The kind of a topic name, or undefined for a name that is none. */

export function isWsEventType(type: string): type is WsEventType {
  return Object.hasOwn(wsEvents, type);
}

/**
 * Checks an event from another process against the catalogue: its type is known, goes to this
 * topic, and its data has the type's shape. Answers why not, or null.
 */
export function wsEventProblem(topic: string, type: string, data: unknown): string | null {
  if (!isWsEventType(type)) return `unknown event type ${type}`;
  const spec: EventSpec = wsEvents[type];
  const kind = topicKindOf(topic);
  if (!kind || !spec.topics.includes(kind)) return `${type} does not go to the topic ${topic}`;
  const r = spec.data.safeParse(data);
  if (r.success) return null;
  return `${type}: ${firstIssue(r.error, 'data', 'invalid data')}`;
}
