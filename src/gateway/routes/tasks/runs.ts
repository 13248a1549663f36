import { isAbsolute, resolve } from 'node:path';
import { statSync } from 'node:fs';
import { z } from 'zod';
import { viewSummary } from '../../../shared/event-summaries.js';
import {
  describeSchedule,
  isTimezone,
  machineTimezone,
  nextFires,
  scheduleProblem,
  wallTime,
} from '../../../shared/cron/schedule.js';
import { platformNames } from '../../../shared/config/channels.js';
import { notifyPlatforms } from '../../../shared/cron/targets.js';
import { ApiError, invalidInput, issuePlace, type FieldLabels } from '../../../shared/errors.js';
import { cronTaskLabels } from '../../../shared/form-labels.js';
import { IpcCallError } from '../../../shared/protocol/endpoint.js';
import {
  createCronTask,
  cronTaskNotFound,
  cronTaskView,
  getCronTask,
  listCronTasks,
  listRuns,
  notifyTargetSchema,
  runView,
  sessionModes,
  trashCronTask,
  updateCronTask,
  type CronTask,
  type CronTaskSpec,
} from '../../../shared/store/cron.js';
import { permissionModes } from '../../../shared/store/sessions.js';
import { findWorkflow } from '../../../shared/workflows/catalog.js';
import { WORKFLOW_NAME } from '../../../shared/workflows/format.js';
import { resolveInputs, runInputsSchema } from '../../../shared/workflows/start.js';
import {
  cronRunList,
  cronRunStarted,
  schedulePreview,
} from '../../../shared/protocol/answers/tasks.js';
import type { Deps } from '../../deps.js';
import { route, type Route } from '../../route.js';

/** The fields of a cron task as a client sends them; the checks a schema cannot make come after. */
const cronFields = {
  name: z
    .string()
    .trim()
    .min(1, 'the name must not be empty')
    .max(200, 'the name is at most 200 characters')
    .describe('What a person calls it (1-200 characters).'),
  schedule: z
    .string()
    .trim()
    .max(200, 'the schedule is at most 200 characters')
    .superRefine((s, ctx) => {
      const problem = scheduleProblem(s);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          message: problem,
        });
    })
    .describe(
      'When it runs: a cron line of 5 fields (minute hour day month weekday) or 6 (seconds first), or a nickname such as @hourly, @daily, @weekly.',
    ),
  timezone: z
    .string()
    .refine(
      isTimezone,
      'not an IANA time zone this machine knows (e.g. Europe/Berlin, America/New_York, UTC)',
    )
    .describe("The IANA time zone the schedule is read in (default: the machine's)."),
  prompt: z
    .string()
    .trim()
    .min(1, 'the prompt must not be empty')
    .max(100_000)
    .describe('The message each run sends the agent; a task has a prompt or a workflow, not both.'),
  workflow: z
    .string()
    .regex(WORKFLOW_NAME, 'not a workflow name (lowercase letters, digits and single hyphens)')
    .describe('The workflow each run starts (GET /api/workflows lists them), instead of a prompt.'),
  inputs: runInputsSchema.describe("The workflow's inputs by name (default {})."),
  enabled: z.boolean().describe('Whether it runs on its schedule (default true).'),
  model: z
    .string()
    .trim()
    .min(1, 'the model must not be empty')
    .max(100)
    .nullable()
    .describe('A model entry id or a slot (default, lite); null or omitted: the default slot.'),
  working_dir: z
    .string()
    .min(1)
    .max(4096)
    .nullable()
    .describe("The folder its turns work in: an existing absolute path, or null for svc's."),
  permission_mode: z
    .enum(permissionModes)
    .describe('How its tool calls are approved (default auto).'),
  session: z
    .enum(sessionModes)
    .describe('new (the default): a new session per run; reuse: every run in one session.'),
  notify: z
    .array(notifyTargetSchema)
    .max(20, 'at most 20 notify targets')
    .describe(
      'Connected channels told the result of each run: [{platform, chat_id}] (default []).',
    ),
  max_runtime_seconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .describe('A run still going after this long is stopped (default 1800).'),
  catch_up: z
    .boolean()
    .describe('Run once at start for a time missed while svc was down (default true).'),
  approval_timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .nullable()
    .describe(
      'How long an approval a run asks for waits before it is denied; null: config cron.approval_timeout_seconds.',
    ),
};
export const createCron = z
  .strictObject({ kind: z.literal('cron').describe('A scheduled task.'), ...cronFields })
  .partial()
  .required({ kind: true, name: true, schedule: true });
export const patchCron = z
  .strictObject(cronFields)
  .partial()
  .refine(
    (b) => Object.keys(b).length > 0,
    `send at least one of: ${Object.keys(cronFields).join(', ')}`,
  );
const previewQuery = z.object({
  // Checked by the handler: the form shows its answer as typed, so it says one plain sentence.
  schedule: z.string().max(200, 'the schedule is at most 200 characters'),
  timezone: cronFields.timezone.optional(),
  from: z.iso
    .datetime({ offset: true, message: 'from is an ISO 8601 time, e.g. 2026-03-27T12:00:00Z' })
    .optional(),
  count: z
    .string()
    .regex(/^\d{1,2}$/, 'count is a whole number from 1 to 20')
    .transform(Number)
    .pipe(z.number().min(1).max(20))
    .default(5),
});

/** What a refused cron task is called, and its fields by the schedule form's labels. */
const cronForm = { what: 'scheduled task', labels: cronTaskLabels } as const;

/** A 400 about one field of a cron task, named as the schedule form names it. */
function fieldError(field: string, message: string): ApiError {
  const label = issuePlace(field.split('.'), cronForm.labels);
  return new ApiError('invalid_request', `Invalid ${cronForm.what}: ${label}: ${message}.`, [
    { path: field, message, ...(label !== field ? { label } : {}) },
  ]);
}

/** Parses a body with a schema, answering a 400 that names the first bad field (as the router does). */
export function parseBody<T>(
  schema: z.ZodType<T>,
  value: unknown,
  fields?: { what: string; labels: FieldLabels },
): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw invalidInput(r.error, fields);
}

/** The checks against config and disk: the model, the workflow and its inputs, the folder, the notify platforms. */
function checkSpec(deps: Deps, s: CronTaskSpec): CronTaskSpec {
  const config = deps.config();
  if (s.prompt === null && s.workflow === null)
    throw fieldError('prompt', 'a cron task needs a prompt or a workflow');
  if (s.prompt !== null && s.workflow !== null)
    throw fieldError('workflow', 'give a prompt or a workflow, not both');
  if (
    s.model !== null &&
    s.model !== 'default' &&
    s.model !== 'lite' &&
    !Object.hasOwn(config.models, s.model)
  ) {
    const known = Object.keys(config.models);
    throw fieldError(
      'model',
      `there is no model "${s.model}" (use default, lite${known.length ? `, or one of: ${known.join(', ')}` : ''})`,
    );
  }
  if (s.workflow !== null) {
    const wf = findWorkflow(deps.paths, s.workflow);
    if (!wf)
      throw fieldError(
        'workflow',
        `there is no workflow "${s.workflow}"; GET /api/workflows lists them`,
      );
    if (!wf.workflow)
      throw fieldError(
        'workflow',
        `the workflow "${s.workflow}" is invalid (${wf.error?.field}: ${wf.error?.message})`,
      );
    resolveInputs(s.workflow, wf.workflow, s.inputs);
  }
  let workingDir = s.working_dir;
  if (workingDir !== null) {
    if (!isAbsolute(workingDir))
      throw fieldError('working_dir', `"${workingDir}" is not an absolute path`);
    let isDir = false;
    try {
      isDir = statSync(workingDir).isDirectory();
    } catch {
      throw fieldError('working_dir', `"${workingDir}" does not exist (or cannot be read)`);
    }
    if (!isDir) throw fieldError('working_dir', `"${workingDir}" is not a folder`);
    workingDir = resolve(workingDir);
  }
  const platforms = notifyPlatforms(config);
  s.notify.forEach((t, i) => {
    if (!platforms.some((p) => p === t.platform)) {
      const connected = platforms.length ? `connected: ${platforms.join(', ')}` : 'none is';
      const how = platformNames.some((p) => p === t.platform)
        ? `connect it on the Channels page or with POST /api/channels/${t.platform}`
        : `svc knows ${platformNames.join(', ')}`;
      throw fieldError(
        `notify.${i}.platform`,
        `the platform "${t.platform}" is not a connected channel (${connected}); ${how}`,
      );
    }
  });
  return { ...s, working_dir: workingDir };
}

/** The spec of a task, without its stored bookkeeping. */
function specOf(t: CronTask): CronTaskSpec {
  const {
    id: _i,
    reuse_session_id: _r,
    sched_from: _s,
    created_at: _c,
    updated_at: _u,
    ...spec
  } = t;
  return spec;
}

/** Cron tasks beside the task graph on /api/tasks: what tasks.ts hands over to this module. */
export interface CronTaskApi {
  isCron: (id: string) => boolean;
  list: () => ReturnType<typeof cronTaskView>[];
  create: (raw: unknown) => Promise<ReturnType<typeof cronTaskView>>;
  patch: (id: string, raw: unknown) => Promise<ReturnType<typeof cronTaskView>>;
  remove: (id: string) => Promise<{ deleted: string; trash_id: string }>;
  get: (id: string) => ReturnType<typeof cronTaskView>;
}

export function cronTaskApi(deps: Deps): CronTaskApi {
  // The supervisor starts or stops the cron worker and has it reload the task; the store is already right.
  const changed = async (id: string) => {
    await deps.endpoint.request('cron.changed', { id });
  };
  const view = (t: CronTask) => cronTaskView(deps.db, t);
  return {
    isCron: (id) => getCronTask(deps.db, id) !== undefined,
    list: () => listCronTasks(deps.db).map(view),
    get: (id) => {
      const t = getCronTask(deps.db, id);
      if (!t) throw cronTaskNotFound(id);
      return view(t);
    },
    create: async (raw) => {
      const b = parseBody(createCron, raw, cronForm);
      const spec = checkSpec(deps, {
        name: b.name,
        schedule: b.schedule,
        timezone: b.timezone ?? machineTimezone(),
        prompt: b.prompt ?? null,
        workflow: b.workflow ?? null,
        inputs: b.inputs ?? {},
        enabled: b.enabled ?? true,
        model: b.model ?? null,
        working_dir: b.working_dir ?? null,
        permission_mode: b.permission_mode ?? 'auto',
        session: b.session ?? 'new',
        notify: b.notify ?? [],
        max_runtime_seconds: b.max_runtime_seconds ?? 1800,
        catch_up: b.catch_up ?? true,
        approval_timeout_seconds: b.approval_timeout_seconds ?? null,
      });
      const t = createCronTask(deps.db, spec);
      const v = view(t);
      deps.publish('tasks', 'task.created', viewSummary(v));
      await changed(t.id);
      return v;
    },
    patch: async (id, raw) => {
      const cur = getCronTask(deps.db, id);
      if (!cur) throw cronTaskNotFound(id);
      const b = parseBody(patchCron, raw, cronForm);
      if (b.prompt !== undefined && b.workflow !== undefined)
        throw fieldError('workflow', 'give a prompt or a workflow, not both');
      const merged: CronTaskSpec = {
        ...specOf(cur),
        ...(Object.fromEntries(
          Object.entries(b).filter(([, v]) => v !== undefined),
        ) as Partial<CronTaskSpec>),
      };
      if (b.prompt !== undefined) merged.workflow = null;
      if (b.workflow !== undefined) {
        merged.prompt = null;
        if (b.inputs === undefined && b.workflow !== cur.workflow) merged.inputs = {};
      }
      const checked = checkSpec(deps, merged);
      const patch: Partial<CronTaskSpec> = {
        ...b,
        ...(b.working_dir !== undefined ? { working_dir: checked.working_dir } : {}),
      };
      const t = updateCronTask(deps.db, id, patch);
      const v = view(t);
      deps.publish('tasks', 'task.updated', viewSummary(v));
      await changed(id);
      return v;
    },
    remove: async (id) => {
      const { item, task } = trashCronTask(deps.db, deps.paths, id);
      deps.publish('tasks', 'task.deleted', {
        id: task.id,
        kind: 'cron',
        name: task.name,
        trash_id: item.id,
      });
      deps.publish('trash', 'trash.added', { id: item.id, kind: item.kind, name: item.name });
      await changed(id);
      return { deleted: task.id, trash_id: item.id };
    },
  };
}

/** The routes only cron tasks have: run now, run history, and a schedule preview. */
export function cronRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/tasks/:id/run',
      summary:
        'Runs a cron task now, out of schedule (also when disabled). 202 with {run_id, session_id}; 409 while a run of it is going (runs never overlap); 404 for an unknown task.',
      body: z.strictObject({}).optional(),
      status: 202,
      response: cronRunStarted,
      errors: [409],
      handler: async ({ params }) => {
        const id = params.id;
        if (!getCronTask(deps.db, id)) throw cronTaskNotFound(id);
        // A cold start of the cron worker on a busy machine takes seconds; the answer itself comes once the run is recorded.
        const r = await deps.endpoint.request('cron.run', { id }).catch((err: unknown) => {
          if (!(err instanceof IpcCallError)) throw err;
          if (err.code === 'not_found') throw cronTaskNotFound(id);
          if (err.code === 'conflict' || err.code === 'invalid_request')
            throw new ApiError(err.code, err.message);
          if (err.code === 'unavailable' || err.code === 'timeout')
            throw new ApiError(
              'unavailable',
              `The run could not start: ${err.message}. Try again in a moment.`,
            );
          throw err;
        });
        return {
          status: 202,
          body: { status: 'started' as const, id, run_id: r.run_id, session_id: r.session_id },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/runs',
      summary:
        'The runs of a cron task, newest first (the last 100 are kept): {items: [{id, trigger, scheduled_for, status, session_id, started_at, ended_at, error, notify_results, approvals}]}.',
      response: cronRunList,
      handler: ({ params }) => {
        const id = params.id;
        if (!getCronTask(deps.db, id)) throw cronTaskNotFound(id);
        return { body: { items: listRuns(deps.db, id).map(runView) } };
      },
    }),
    route({
      method: 'GET',
      path: '/api/cron/preview',
      summary:
        "The next fire times of a schedule: query schedule, timezone (default the machine's), from (ISO time, default now), count (1-20, default 5). Answers {description (in words), timezone, next: [{at (UTC), local (wall time in the zone)}]}.",
      query: previewQuery,
      fields: { what: 'schedule', labels: cronTaskLabels },
      response: schedulePreview,
      handler: ({ query }) => {
        const problem = scheduleProblem(query.schedule);
        if (problem)
          throw new ApiError('invalid_request', `Not a schedule: ${problem}.`, [
            { path: 'schedule', message: problem },
          ]);
        const tz = query.timezone ?? machineTimezone();
        const from = query.from ? new Date(query.from) : new Date();
        return {
          body: {
            schedule: query.schedule,
            description: describeSchedule(query.schedule),
            timezone: tz,
            next: nextFires(query.schedule, tz, from, query.count).map((d) => ({
              at: d.toISOString(),
              local: wallTime(d, tz),
            })),
          },
        };
      },
    }),
  ];
}
