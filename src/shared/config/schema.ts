import { z } from 'zod';
import { backupConfigSchema } from './backup.js';
import { mcpConfigSchema } from './mcp.js';
import { channelsConfigSchema } from './channels.js';
import { browserConfigSchema } from './browser.js';
import { budgetsSchema } from './budgets.js';
import { telemetryConfigSchema } from './telemetry.js';
import { isPrototypeKey } from '../own.js';
import { secret } from './secret-marker.js';

const MiB = 1024 * 1024;

const perMillion = z.number().min(0).max(100_000);
/** A model's prices, in US dollars per million tokens. */
export const pricesSchema = z
  .object({
    input: perMillion,
    cached_input: perMillion.optional(),
    cache_write: perMillion.optional(),
    output: perMillion,
  })
  .strict();

const GiB = 1024 * MiB;

/**
 * The slots that name a model entry: `default` and `lite` for chats and side jobs; `embeddings`
 * (optional) for semantic search, an OpenAI-compatible /v1/embeddings endpoint.
 */
export const slotNames = ['default', 'lite', 'embeddings'] as const;
export type SlotName = (typeof slotNames)[number];

/** A model entry: which provider, which model, and how to reach it. `api_key` is write-only over the API. */
export const modelEntrySchema = z
  .object({
    provider: z.string().min(1).max(64),
    model: z.string().min(1).max(200),
    /** Only for providers that speak either protocol (custom); others use the catalog's. */
    protocol: z.enum(['openai', 'anthropic']).optional(),
    base_url: z.url({ protocol: /^https?$/ }).optional(),
    api_key: z.string().min(1).max(4096).apply(secret).optional(),
    context_window: z.number().int().min(1024).max(10_000_000).optional(),
    max_output_tokens: z.number().int().min(1).max(1_000_000).optional(),
    /** Whether the model takes images; the catalog knows its suggested models, this says it for others. */
    vision: z.boolean().optional(),
    /** US dollars per million tokens; overrides svc's built-in prices (providers/prices.ts). */
    prices: pricesSchema.optional(),
  })
  .strict();
export type ModelEntry = z.infer<typeof modelEntrySchema>;

export const modelIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'a model id is 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
  )
  .refine(
    (id) => !(slotNames as readonly string[]).includes(id),
    '"default", "lite" and "embeddings" are the names of the slots, not model ids',
  )
  .refine((id) => !isPrototypeKey(id), {
    error: (i) =>
      `"${String(i.input)}" is a name JavaScript objects reserve; choose another model id`,
  });

/** config.yml. Strict, so a misspelt key is reported instead of silently ignored. */
export const configSchema = z
  .object({
    addr: z.string().optional().describe('listen address; the -addr flag wins'),
    access_key: z
      .string()
      .min(16, 'the access key must be at least 16 characters')
      .regex(/^\S+$/, 'the access key must not contain spaces')
      .apply(secret)
      .optional(),
    cors: z.array(z.string()).default([]),
    limits: z
      .object({
        json_body_bytes: z
          .number()
          .int()
          .positive()
          .default(1 * MiB),
        upload_bytes: z
          .number()
          .int()
          .positive()
          .default(512 * MiB),
        ws_frame_bytes: z
          .number()
          .int()
          .positive()
          .default(4 * MiB),
        /**
         * A /ws topic nobody follows and with no event for this long lets its kept history go
         * (a client resuming from further back is told to resync).
         */
        ws_idle_topic_seconds: z.number().min(1).max(86_400).default(300),
      })
      .strict()
      .prefault({}),
    restart: z
      .object({ drain_seconds: z.number().positive().max(600).default(30) })
      .strict()
      .prefault({}),
    agent: z
      .object({
        max_workers: z.number().int().min(1).max(32).default(2),
        max_steps: z.number().int().min(1).max(500).default(50),
        /** Goal continuation turns in a row before svc stops and waits for the user. */
        max_continuations: z.number().int().min(0).max(1000).default(25),
        /** A provider stream that sends nothing for this long is given up. */
        stall_seconds: z.number().positive().max(3600).default(60),
        /** An agent worker with nothing to do for this long exits (the next turn starts one); 0 keeps them. */
        idle_retire_seconds: z.number().min(0).max(86_400).default(300),
        /** An approval nobody answers is denied after this long, so a turn never waits forever. */
        approval_timeout_seconds: z.number().int().min(1).max(86_400).default(1800),
        /** All full outputs of tool calls ($SVC_HOME/tool-output) together; the oldest go first beyond it. */
        tool_output_max_bytes: z
          .number()
          .int()
          .min(MiB)
          .default(2 * GiB),
      })
      .strict()
      .prefault({}),
    models: z.record(modelIdSchema, modelEntrySchema).default({}),
    slots: z
      .object({
        default: modelIdSchema.optional(),
        lite: modelIdSchema.optional(),
        /** Set: messages are embedded in the background and search ranks by both (search/semantic.ts). */
        embeddings: modelIdSchema.optional(),
      })
      .strict()
      .prefault({}),
    trash: z
      .object({
        retention_days: z.number().positive().max(3650).default(14),
        max_bytes: z
          .number()
          .int()
          .positive()
          .default(10 * GiB),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
        /** Each process's log file is rotated past this size; `files` rotated ones are kept. */
        file_bytes: z
          .number()
          .int()
          .min(1024)
          .default(10 * MiB),
        files: z.number().int().min(1).max(20).default(3),
      })
      .strict()
      .prefault({}),
    /** The OS sandbox around terminal commands; `enabled: false` turns it off on purpose (every status surface says so). */
    sandbox: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .prefault({}),
    mcp: mcpConfigSchema,
    /**
     * The supervisor pings every child each `ping_seconds`; one that answers none for
     * `timeout_seconds` (and at least three pings in a row) is killed and replaced.
     */
    liveness: z
      .object({
        ping_seconds: z.number().min(0.1).max(60).default(1),
        timeout_seconds: z.number().min(1).max(3600).default(10),
      })
      .strict()
      .prefault({}),
    /** Scheduled tasks: an approval nobody answers during a run is denied after this long (a task may set its own). */
    cron: z
      .object({ approval_timeout_seconds: z.number().int().min(1).max(86_400).default(600) })
      .strict()
      .prefault({}),
    /** Messaging channels by platform (telegram, messenger), each with `enabled` and its fields. */
    channels: channelsConfigSchema,
    /** The browser the agent drives over CDP: cdp_url, port or launch: auto (see config/browser.ts). */
    browser: browserConfigSchema,
    /** Search by meaning (with slots.embeddings): neighbours less similar than this are left out. */
    search: z
      .object({ min_similarity: z.number().min(-1).max(1).default(0.3) })
      .strict()
      .prefault({}),
    /** Spending limits, checked before every model call (see config/budgets.ts). */
    budgets: budgetsSchema,
    /** OpenTelemetry traces of turns, sent over OTLP/HTTP when an endpoint is set (config/telemetry.ts). */
    telemetry: telemetryConfigSchema,
    /** Scheduled backups: schedule, dir, keep, encryption (see config/backup.ts). */
    backup: backupConfigSchema,
    /** Where releases come from (SVC_RELEASES_URL wins) and whether svc looks for a newer one. */
    upgrade: z
      .object({
        releases_url: z
          .url({
            protocol: /^https$/,
            error:
              'upgrade.releases_url must be an https:// URL (the base of a GitHub-compatible releases API)',
          })
          .default('https://api.github.com/repos/svc-agent/svc/releases'),
        check: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const slot of slotNames) {
      const id = c.slots[slot];
      if (id !== undefined && !Object.hasOwn(c.models, id))
        ctx.addIssue({
          code: 'custom',
          path: ['slots', slot],
          message: `names model "${id}", which is not under models`,
        });
    }
    const emb = c.slots.embeddings === undefined ? undefined : c.models[c.slots.embeddings];
    if (emb?.protocol === 'anthropic')
      ctx.addIssue({
        code: 'custom',
        path: ['slots', 'embeddings'],
        message:
          'names a model spoken to with the anthropic protocol; embeddings need an OpenAI-compatible /v1/embeddings endpoint',
      });
  });

export type Config = z.infer<typeof configSchema>;
