import { z } from 'zod';
import { describeSchedule, nextFires, wallTime } from '../cron/schedule.js';
import { StoreError } from '../errors.js';
import type { Paths } from '../paths.js';
import {
  type cronTaskSchema,
  inputValueSchema,
  notifyTargetSchema,
  runStatuses,
  runTriggers,
  sessionModes,
} from '../protocol/answers/tasks.js';
import { listRuns } from './cron-runs.js';
import type { Db } from './db.js';
import { permissionModes } from './sessions.js';
import { putInTrash, type TrashItem, type TrashKind, trashConflict } from './trash.js';
import { isoNow, newId, stmt } from './util.js';

/** Scheduled tasks (kind "cron" on /api/tasks); their runs are in cron-runs.ts, re-exported here. Any process reads; the routes and the cron worker write. */

export * from './cron-runs.js';
export { notifyTargetSchema, runStatuses, runTriggers, sessionModes };
export type NotifyTarget = z.infer<typeof notifyTargetSchema>;

/** The stored row. */
const rowSchema = z.object({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  prompt: z.string().nullable(),
  workflow: z.string().nullable(),
  inputs: z.string(),
  enabled: z.number().int(),
  model: z.string().nullable(),
  working_dir: z.string().nullable(),
  permission_mode: z.enum(permissionModes),
  session_mode: z.enum(sessionModes),
  reuse_session_id: z.string().nullable(),
  notify: z.string(),
  max_runtime_seconds: z.number().int(),
  catch_up: z.number().int(),
  approval_timeout_seconds: z.number().int().nullable(),
  sched_from: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CronTaskRow = z.infer<typeof rowSchema>;
const COLS = Object.keys(rowSchema.shape).join(', ');

export interface CronTaskSpec {
  name: string;
  schedule: string;
  timezone: string;
  prompt: string | null;
  workflow: string | null;
  inputs: Record<string, string | number | boolean>;
  enabled: boolean;
  /** A model id, or a slot name (default, lite); null is the default slot. */
  model: string | null;
  working_dir: string | null;
  permission_mode: (typeof permissionModes)[number];
  session: (typeof sessionModes)[number];
  notify: NotifyTarget[];
  max_runtime_seconds: number;
  catch_up: boolean;
  /** null follows config cron.approval_timeout_seconds. */
  approval_timeout_seconds: number | null;
}

/** A task as stored, decoded. */
export interface CronTask extends CronTaskSpec {
  id: string;
  reuse_session_id: string | null;
  sched_from: string;
  created_at: string;
  updated_at: string;
}

function toTask(raw: unknown): CronTask {
  const r = rowSchema.parse(raw);
  return {
    id: r.id,
    name: r.name,
    schedule: r.schedule,
    timezone: r.timezone,
    prompt: r.prompt,
    workflow: r.workflow,
    inputs: z.record(z.string(), inputValueSchema).parse(JSON.parse(r.inputs)),
    enabled: r.enabled === 1,
    model: r.model,
    working_dir: r.working_dir,
    permission_mode: r.permission_mode,
    session: r.session_mode,
    notify: z.array(notifyTargetSchema).parse(JSON.parse(r.notify)),
    max_runtime_seconds: r.max_runtime_seconds,
    catch_up: r.catch_up === 1,
    approval_timeout_seconds: r.approval_timeout_seconds,
    reuse_session_id: r.reuse_session_id,
    sched_from: r.sched_from,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function toRow(t: CronTask): CronTaskRow {
  return {
    id: t.id,
    name: t.name,
    schedule: t.schedule,
    timezone: t.timezone,
    prompt: t.prompt,
    workflow: t.workflow,
    inputs: JSON.stringify(t.inputs),
    enabled: t.enabled ? 1 : 0,
    model: t.model,
    working_dir: t.working_dir,
    permission_mode: t.permission_mode,
    session_mode: t.session,
    reuse_session_id: t.reuse_session_id,
    notify: JSON.stringify(t.notify),
    max_runtime_seconds: t.max_runtime_seconds,
    catch_up: t.catch_up ? 1 : 0,
    approval_timeout_seconds: t.approval_timeout_seconds,
    sched_from: t.sched_from,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

export function cronTaskNotFound(id: string): StoreError {
  return new StoreError('not_found', `There is no task ${id}.`);
}

export function getCronTask(db: Db, id: string): CronTask | undefined {
  const r = stmt<[string]>(db, `SELECT ${COLS} FROM cron_tasks WHERE id = ?`).get(id);
  return r === undefined ? undefined : toTask(r);
}

/** In creation order. */
export function listCronTasks(db: Db): CronTask[] {
  return stmt(db, `SELECT ${COLS} FROM cron_tasks ORDER BY created_at, id`).all().map(toTask);
}

/** Whether the cron worker is wanted: an enabled task, or a run still going. */
export function cronWorkNeeded(db: Db): boolean {
  const r = stmt<[], { n: number }>(
    db,
    "SELECT (SELECT count(*) FROM cron_tasks WHERE enabled = 1) + (SELECT count(*) FROM cron_runs WHERE status = 'running') AS n",
  ).get();
  return (r?.n ?? 0) > 0;
}

const insertSql = `INSERT INTO cron_tasks (${COLS}) VALUES (${Object.keys(rowSchema.shape)
  .map((k) => `@${k}`)
  .join(', ')})`;

export function createCronTask(db: Db, spec: CronTaskSpec): CronTask {
  const now = isoNow();
  const t: CronTask = {
    ...spec,
    id: newId('task'),
    reuse_session_id: null,
    sched_from: now,
    created_at: now,
    updated_at: now,
  };
  stmt(db, insertSql).run(toRow(t));
  return t;
}

/** Changes the fields given; a schedule, timezone or enable change restarts the count of due times from now (no burst of old ones). */
export function updateCronTask(db: Db, id: string, patch: Partial<CronTaskSpec>): CronTask {
  return db
    .transaction(() => {
      const cur = getCronTask(db, id);
      if (!cur) throw cronTaskNotFound(id);
      const given = Object.fromEntries(
        Object.entries(patch).filter(([, v]) => v !== undefined),
      ) as Partial<CronTaskSpec>;
      const next: CronTask = { ...cur, ...given, updated_at: isoNow() };
      if (given.prompt != null) next.workflow = null;
      if (given.workflow != null) next.prompt = null;
      if (given.workflow != null && given.inputs === undefined && given.workflow !== cur.workflow)
        next.inputs = {};
      const rescheduled =
        next.schedule !== cur.schedule ||
        next.timezone !== cur.timezone ||
        (next.enabled && !cur.enabled);
      if (rescheduled) next.sched_from = next.updated_at;
      if (next.session !== 'reuse') next.reuse_session_id = null;
      stmt(
        db,
        `UPDATE cron_tasks SET ${Object.keys(rowSchema.shape)
          .filter((k) => k !== 'id')
          .map((k) => `${k} = @${k}`)
          .join(', ')} WHERE id = @id`,
      ).run(toRow(next));
      return next;
    })
    .immediate();
}

/** Scheduled times after `at` count as due from now on (called as a time fires). */
export function setSchedFrom(db: Db, id: string, at: string): void {
  stmt(db, 'UPDATE cron_tasks SET sched_from = ? WHERE id = ? AND sched_from < ?').run(at, id, at);
}

export function setReuseSession(db: Db, id: string, sessionId: string): void {
  stmt(db, 'UPDATE cron_tasks SET reuse_session_id = ? WHERE id = ?').run(sessionId, id);
}

export const CRON_TRASH_KIND = 'cron_task';
const trashPayload = z.object({ task: rowSchema });

/** Moves a task to the trash (its run history stays, so a restored task keeps it). */
export function trashCronTask(
  db: Db,
  paths: Paths,
  id: string,
): { item: TrashItem; task: CronTask } {
  return db
    .transaction(() => {
      const task = getCronTask(db, id);
      if (!task) throw cronTaskNotFound(id);
      const item = putInTrash(db, paths, {
        kind: CRON_TRASH_KIND,
        name: task.name,
        original: id,
        payload: { task: toRow(task) },
      });
      stmt(db, 'DELETE FROM cron_tasks WHERE id = ?').run(id);
      return { item, task };
    })
    .immediate();
}

/** Restores with its schedule; times missed while it was in the trash are not run. */
export const cronTaskTrashKind: TrashKind = {
  restore({ db, payload, options }) {
    const p = trashPayload.parse(payload);
    const asNew = options.as_new === true || options.new_name !== undefined;
    if (!asNew && getCronTask(db, p.task.id))
      throw trashConflict(
        `A task with id ${p.task.id} exists again; restore this one as a copy with {"as_new": true}.`,
        { task_id: p.task.id },
      );
    const now = isoNow();
    const row: CronTaskRow = {
      ...p.task,
      id: asNew ? newId('task') : p.task.id,
      name: options.new_name ?? p.task.name,
      sched_from: now,
      updated_at: now,
    };
    stmt(db, insertSql).run(row);
    return { restored_to: row.id, task: toTask(row) };
  },
};

/* ---------- the API view ---------- */

export type CronTaskView = z.infer<typeof cronTaskSchema>;

/** A task as the API shows it: its fields, when it fires next (UTC and the zone's wall time), and its last run. */
export function cronTaskView(db: Db, t: CronTask, now = new Date()): CronTaskView {
  const next = t.enabled ? (nextFires(t.schedule, t.timezone, now)[0] ?? null) : null;
  const last = listRuns(db, t.id, 1)[0];
  const { sched_from: _s, reuse_session_id, ...fields } = t;
  return {
    kind: 'cron' as const,
    ...fields,
    session_id: reuse_session_id,
    description: describeSchedule(t.schedule),
    next_run_at: next ? next.toISOString() : null,
    next_run_local: next ? wallTime(next, t.timezone) : null,
    last_run: last
      ? {
          id: last.id,
          status: last.status,
          started_at: last.started_at,
          ended_at: last.ended_at,
          session_id: last.session_id,
          error: last.error,
        }
      : null,
  };
}
