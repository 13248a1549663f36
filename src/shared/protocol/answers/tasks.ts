import { z } from 'zod';
import { permissionModes } from '../session-modes.js';

/**
 * The answers of /api/tasks (graph and cron tasks), their runs and the schedule preview. The
 * store's types and enums come from here (zod and node-free, like answers.ts), so the answer a
 * route declares and the rows it reads are one description.
 */

export const taskKinds = ['graph'] as const;
export const taskStatuses = ['pending', 'in_progress', 'completed'] as const;
export const sessionModes = ['new', 'reuse'] as const;
export const runStatuses = ['running', 'completed', 'failed', 'interrupted'] as const;
export const runTriggers = ['schedule', 'manual', 'catch_up'] as const;

/** A task of the agent's plan (kind graph). */
export const graphTaskSchema = z.lazy(() =>
  z
    .object({
      id: z.string(),
      kind: z.enum(taskKinds),
      subject: z.string(),
      description: z.string(),
      status: z.enum(taskStatuses),
      /** Ids of tasks (same kind) that must be completed before this one may start. */
      blocked_by: z.array(z.string()),
      owner_session: z.string().nullable(),
      /** Kind-specific fields; {} for graph tasks. */
      data: z.record(z.string(), z.unknown()),
      created_at: z.string(),
      updated_at: z.string(),
    })
    .meta({ id: 'Task' }),
);

export const notifyTargetSchema = z.lazy(() =>
  z.strictObject({
    platform: z.string().trim().min(1, 'the platform must not be empty').max(50),
    chat_id: z.string().trim().min(1, 'the chat_id must not be empty').max(200),
  }),
);

/** A workflow input's value as a cron task keeps it. */
export const inputValueSchema = z.lazy(() =>
  z.union([z.string().max(100_000), z.number(), z.boolean()]),
);

/** A scheduled task as the API shows it: its fields, when it fires next, its last run. */
export const cronTaskSchema = z.lazy(() =>
  z
    .object({
      kind: z.literal('cron'),
      id: z.string(),
      name: z.string(),
      schedule: z.string(),
      timezone: z.string(),
      prompt: z.string().nullable(),
      workflow: z.string().nullable(),
      inputs: z.record(z.string(), inputValueSchema),
      enabled: z.boolean(),
      /** A model id, or a slot name (default, lite); null is the default slot. */
      model: z.string().nullable(),
      working_dir: z.string().nullable(),
      permission_mode: z.enum(permissionModes),
      session: z.enum(sessionModes),
      notify: z.array(notifyTargetSchema),
      max_runtime_seconds: z.number().int(),
      catch_up: z.boolean(),
      /** null follows config cron.approval_timeout_seconds. */
      approval_timeout_seconds: z.number().int().nullable(),
      created_at: z.string(),
      updated_at: z.string(),
      /** The session its runs reuse (session: reuse), once one ran. */
      session_id: z.string().nullable(),
      /** The schedule in words. */
      description: z.string(),
      /** When it fires next (UTC), and the zone's wall time then; null when disabled. */
      next_run_at: z.string().nullable(),
      next_run_local: z.string().nullable(),
      last_run: z
        .object({
          id: z.string(),
          status: z.enum(runStatuses),
          started_at: z.string(),
          ended_at: z.string().nullable(),
          session_id: z.string().nullable(),
          error: z.string().nullable(),
        })
        .nullable(),
    })
    .meta({ id: 'CronTask' }),
);

/** Either kind of task, told apart by `kind`. */
export const anyTaskSchema = z.lazy(() =>
  z.discriminatedUnion('kind', [graphTaskSchema, cronTaskSchema]),
);
export const taskList = z.lazy(() => z.object({ items: z.array(anyTaskSchema) }));
export const taskDeleted = z.lazy(() =>
  z.object({
    deleted: z.string(),
    /** A cron task went to the trash: its item there. */
    trash_id: z.string().optional(),
  }),
);

export const notifyResultSchema = z.lazy(() =>
  z.object({
    platform: z.string(),
    chat_id: z.string(),
    ok: z.boolean(),
    message_id: z.string().nullable().optional(),
    error: z.string().optional(),
    kind: z.enum(['result', 'approval']),
    at: z.string(),
  }),
);
export const approvalRecordSchema = z.lazy(() =>
  z.object({
    approval_id: z.string(),
    tool: z.string(),
    reason: z.string(),
    decision: z.string().nullable(),
    why: z.string().nullable(),
    asked_at: z.string(),
    answered_at: z.string().nullable(),
  }),
);

/** One run of a cron task. */
export const cronRunSchema = z.lazy(() =>
  z
    .object({
      id: z.string(),
      task_id: z.string(),
      trigger: z.enum(runTriggers),
      scheduled_for: z.string().nullable(),
      status: z.enum(runStatuses),
      session_id: z.string().nullable(),
      started_at: z.string(),
      ended_at: z.string().nullable(),
      error: z.string().nullable(),
      notify_results: z.array(notifyResultSchema),
      approvals: z.array(approvalRecordSchema),
    })
    .meta({ id: 'CronRun' }),
);
export const cronRunList = z.lazy(() => z.object({ items: z.array(cronRunSchema) }));

/** POST /api/tasks/{id}/run: the run began; its session has the turn. */
export const cronRunStarted = z.lazy(() =>
  z.object({
    status: z.literal('started'),
    id: z.string(),
    run_id: z.string(),
    session_id: z.string(),
  }),
);

export const schedulePreview = z.lazy(() =>
  z.object({
    schedule: z.string(),
    /** The schedule in words. */
    description: z.string(),
    timezone: z.string(),
    /** The next fire times: UTC, and the zone's wall time. */
    next: z.array(z.object({ at: z.string(), local: z.string() })),
  }),
);
