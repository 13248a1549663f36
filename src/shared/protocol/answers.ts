import { z } from 'zod';
import { providerCatalogEntrySchema, providerProtocolSchema } from '../providers/catalog.js';
import {
  artifactSchema,
  goalSchema,
  messageSummarySchema,
  onboardSchema,
  sessionSchema,
} from './events.js';

/**
 * The bodies of the REST API's answers: each route declares one (src/gateway/routes), the
 * OpenAPI document carries it, tests check every answer against it (SVC_CHECK_RESPONSES), and
 * the Web UI takes its types from here. zod and node-free, like events.ts: the Web UI's type
 * check reads it. Schemas describe the answers as they are: a field is added, never changed.
 *
 * Each one here and in answers/ is a z.lazy, built on first use (the OpenAPI document, the tests'
 * answer check, a store parse): a start that built them all paid for ~800 schemas it never used
 * (bench/RESULTS.md). unit/answer-check fails on one that is not.
 */

/** A page of a list: `next_cursor` is null on the last page. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable() });

/** What a session's, a turn's or the server's model calls used and cost (GET /api/usage). */
export const spendSchema = z.lazy(() =>
  z
    .object({
      calls: z.number().int(),
      /** Calls whose provider reported no usage (their tokens are not in the sums). */
      unknown_calls: z.number().int(),
      input_tokens: z.number(),
      cached_input_tokens: z.number(),
      cache_write_tokens: z.number(),
      output_tokens: z.number(),
      reasoning_tokens: z.number(),
      cost_usd: z.number(),
      /** Calls with reported tokens but no known price (their cost is not in cost_usd). */
      unpriced_calls: z.number().int(),
    })
    .meta({ id: 'Spend' }),
);
export type Spend = z.infer<typeof spendSchema>;

/* ---------- sessions ---------- */

export const sessionPage = z.lazy(() => page(sessionSchema));
export const sessionDetail = z.lazy(() =>
  sessionSchema
    .extend({ goal: goalSchema.nullable(), spend: spendSchema })
    .meta({ id: 'SessionDetail' }),
);
export type SessionDetail = z.infer<typeof sessionDetail>;
export const sessionDeleted = z.lazy(() => z.object({ deleted: z.string(), trash_id: z.string() }));
export const messagePage = z.lazy(() => page(messageSummarySchema));
export const artifactList = z.lazy(() => z.object({ items: z.array(artifactSchema) }));

const turnStatus = z.enum(['running', 'completed', 'failed', 'interrupted']);

/** How a turn that did not complete ended, as its row keeps it (a turn's answer and the turn list). */
const turnEndFields = {
  /** A failed turn: why (worker_crashed, provider_…) and what a person reads. */
  error: z.object({ reason: z.string(), message: z.string() }).optional(),
  /** An interrupted turn svc stopped itself (restarted, …). */
  reason: z.string().optional(),
};

/** A turn as its waiting POST answers it and GET /api/sessions/{id}/turns/{turn_id} reads it. */
export const turnOutcomeSchema = z.lazy(() =>
  z
    .object({
      session_id: z.string(),
      turn_id: z.string(),
      status: turnStatus,
      origin: z.string(),
      started_at: z.string(),
      ended_at: z.string().nullable(),
      reply: z.string().nullable(),
      stop_reason: z.string().nullable(),
      /** The provider's token counts as it reported them, or null. */
      usage: z.record(z.string(), z.number()).nullable(),
      spend: spendSchema,
      ...turnEndFields,
      messages: z.array(messageSummarySchema),
    })
    .meta({ id: 'TurnOutcome' }),
);
export type TurnOutcome = z.infer<typeof turnOutcomeSchema>;

/** The first turn of a new chat adds the session as it is now. */
export const chatOutcome = z.lazy(() =>
  turnOutcomeSchema.unwrap().extend({ session: sessionSchema }),
);
/** A chat created without a message. */
export const chatCreated = z.lazy(() =>
  z.object({ session_id: z.string(), session: sessionSchema }),
);
/** ?wait=false: the turn started; GET /api/sessions/{id}/turns/{turn_id} follows it. */
export const turnAccepted = z.lazy(() =>
  z.object({
    session_id: z.string(),
    turn_id: z.string(),
    status: z.literal('running'),
    /** A new chat (POST /api/chat): the session, its first message stored. */
    session: sessionSchema.optional(),
  }),
);
export type TurnAccepted = z.infer<typeof turnAccepted>;

export const turnList = z.lazy(() =>
  page(
    z.object({
      turn_id: z.string(),
      status: turnStatus,
      origin: z.string(),
      started_at: z.string(),
      ended_at: z.string().nullable(),
      /** The seq of the message that started it; null for turns from before it was kept. */
      first_seq: z.number().int().nullable(),
      stop_reason: z.string().nullable(),
      spend: spendSchema,
      ...turnEndFields,
    }),
  ),
);

/** The tool calls of a running turn that wait for the person's answer. */
export const pendingApprovals = z.lazy(() =>
  z.object({
    items: z.array(
      z.object({
        approval_id: z.string(),
        turn_id: z.string(),
        call_id: z.string(),
        tool: z.string(),
        input: z.unknown(),
        reason: z.string(),
        sandbox_notice: z.string().optional(),
      }),
    ),
  }),
);
export type PendingApprovals = z.infer<typeof pendingApprovals>;
export const approvalDecision = z.lazy(() => z.enum(['allow_once', 'allow_session', 'deny']));
export const approvalAnswered = z.lazy(() =>
  z.object({ approval_id: z.string(), decision: approvalDecision }),
);
export const interruptResult = z.lazy(() =>
  z.object({
    interrupted: z.boolean(),
    turn_id: z.string().nullable(),
  }),
);

export const goalCleared = z.lazy(() =>
  z.object({ cleared: z.literal(true), session_id: z.string() }),
);
export const sessionImported = z.lazy(() =>
  z.object({
    session: sessionSchema,
    /** Attachments the file named but neither carried nor found here by name. */
    missing_attachments: z.array(z.string()),
  }),
);

/* ---------- models and config ---------- */

/** US dollars per million tokens. */
export const pricesView = z.lazy(() =>
  z
    .object({
      input: z.number(),
      cached_input: z.number().optional(),
      cache_write: z.number().optional(),
      output: z.number(),
    })
    .meta({ id: 'Prices' }),
);
export type Prices = z.infer<typeof pricesView>;

/** A model entry as the API shows it: never the key, only whether one is set and where from. */
export const modelView = z.lazy(() =>
  z
    .object({
      id: z.string(),
      provider: z.string(),
      model: z.string(),
      protocol: providerProtocolSchema,
      base_url: z.string().nullable(),
      api_key_set: z.boolean(),
      api_key_source: z.enum(['config', 'env']).nullable(),
      context_window: z.number().nullable(),
      max_output_tokens: z.number().nullable(),
      /** Whether the model takes images: said by the entry, else known from the catalog. */
      vision: z.boolean(),
      /** What its calls are charged at: the entry's own prices (`config`), svc's shipped ones, or none. */
      prices: pricesView.nullable(),
      prices_source: z.enum(['config', 'builtin']).nullable(),
      prices_taken: z.string().nullable(),
      /** The slots (default, …) this entry fills. */
      slots: z.array(z.string()),
    })
    .meta({ id: 'ModelEntry' }),
);
export type ModelEntryView = z.infer<typeof modelView>;

export const slotsView = z.lazy(() => z.record(z.string(), z.string().nullable()));
export const modelList = z.lazy(() => z.object({ items: z.array(modelView), slots: slotsView }));
export const slotAnswer = z.lazy(() =>
  z.object({
    slot: z.string(),
    model_id: z.string().nullable(),
    model: modelView.nullable(),
  }),
);
export const modelDeleted = z.lazy(() => z.object({ deleted: z.string() }));

export const providerView = z.lazy(() =>
  providerCatalogEntrySchema
    .extend({
      /** svc's shipped prices of this provider's well-known models, by model name, as listed on prices_taken. */
      prices: z.record(z.string(), pricesView),
      prices_taken: z.string(),
    })
    .meta({ id: 'Provider' }),
);
export type ProviderView = z.infer<typeof providerView>;
export const providerList = z.lazy(() => z.object({ items: z.array(providerView) }));

/** The effective configuration, secrets masked; sections beyond these are config.yml's own. */
export const publicConfigView = z.lazy(() =>
  z.looseObject({
    access_key_in_config: z.boolean(),
    models: z.array(modelView),
    mcp: z.object({ servers: z.array(z.looseObject({ name: z.string() })) }),
  }),
);

/** What a test call to a model found. */
export const modelTestResult = z.lazy(() =>
  z
    .object({
      ok: z.boolean(),
      reason: z
        .enum([
          'bad_key',
          'unknown_model',
          'unreachable',
          'rate_limited',
          'server_error',
          'bad_response',
        ])
        .optional(),
      message: z.string().optional(),
      latency_ms: z.number().optional(),
    })
    .meta({ id: 'ModelTestResult' }),
);
export type ModelTestResult = z.infer<typeof modelTestResult>;

export const onboardStatus = z.lazy(() => onboardSchema.meta({ id: 'OnboardStatus' }));
export type OnboardStatus = z.infer<typeof onboardStatus>;
export const onboardCompletion = z.lazy(() =>
  z.object({
    completed: z.boolean(),
    completed_at: z.string().nullable(),
  }),
);

/* ---------- server ---------- */

export const healthView = z.lazy(() =>
  z.object({
    status: z.enum(['ok', 'draining']),
    uptime_s: z.number(),
    sandbox: z.object({ state: z.enum(['on', 'off', 'unavailable']), message: z.string() }),
  }),
);
export const restarting = z.lazy(() => z.object({ status: z.literal('restarting') }));
