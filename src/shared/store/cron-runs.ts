import { z } from 'zod';
import {
  approvalRecordSchema,
  type cronRunSchema,
  notifyResultSchema,
  runStatuses,
  runTriggers,
} from '../protocol/answers/tasks.js';
import type { Db } from './db.js';
import { isoNow, newId, stmt } from './util.js';

/** The runs of scheduled tasks (cron.ts holds the tasks): the cron worker writes them, the routes read. */

export type CronRunStatus = (typeof runStatuses)[number];
export type CronRunTrigger = (typeof runTriggers)[number];

export type NotifyResult = z.infer<typeof notifyResultSchema>;
export type ApprovalRecord = z.infer<typeof approvalRecordSchema>;

const runRowSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  trigger: z.enum(runTriggers),
  scheduled_for: z.string().nullable(),
  status: z.enum(runStatuses),
  session_id: z.string().nullable(),
  turn_id: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  error: z.string().nullable(),
  reply: z.string().nullable(),
  deadline_at: z.string(),
  notify_results: z.string(),
  approvals: z.string(),
});
type CronRunRow = z.infer<typeof runRowSchema>;
const RUN_COLS = Object.keys(runRowSchema.shape).join(', ');

export interface CronRun extends Omit<CronRunRow, 'notify_results' | 'approvals'> {
  notify_results: NotifyResult[];
  approvals: ApprovalRecord[];
}

/** Runs kept per task; older ones are dropped as new ones start. */
export const RUNS_KEPT = 100;
function toRun(raw: unknown): CronRun {
  const r = runRowSchema.parse(raw);
  return {
    ...r,
    notify_results: z.array(notifyResultSchema).parse(JSON.parse(r.notify_results)),
    approvals: z.array(approvalRecordSchema).parse(JSON.parse(r.approvals)),
  };
}

/* ---------- runs ---------- */

export interface NewRun {
  task_id: string;
  trigger: CronRunTrigger;
  scheduled_for: string | null;
  deadline_at: string;
}

/**
 * Records a run as started, or answers undefined when one of this task is running already or
 * this scheduled time has fired before (the unique indexes decide, across processes).
 */
export function insertRun(db: Db, r: NewRun): CronRun | undefined {
  const row: CronRunRow = {
    id: newId('run'),
    ...r,
    status: 'running',
    session_id: null,
    turn_id: null,
    started_at: isoNow(),
    ended_at: null,
    error: null,
    reply: null,
    notify_results: '[]',
    approvals: '[]',
  };
  try {
    stmt(
      db,
      `INSERT INTO cron_runs (${RUN_COLS}) VALUES (${Object.keys(runRowSchema.shape)
        .map((k) => `@${k}`)
        .join(', ')})`,
    ).run(row);
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
    throw err;
  }
  // Keep the newest RUNS_KEPT of the task.
  stmt(
    db,
    `DELETE FROM cron_runs WHERE task_id = ? AND status != 'running' AND id NOT IN (SELECT id FROM cron_runs WHERE task_id = ? ORDER BY started_at DESC, id DESC LIMIT ${RUNS_KEPT})`,
  ).run(r.task_id, r.task_id);
  return toRun(row);
}

export function getRun(db: Db, id: string): CronRun | undefined {
  const r = stmt<[string]>(db, `SELECT ${RUN_COLS} FROM cron_runs WHERE id = ?`).get(id);
  return r === undefined ? undefined : toRun(r);
}

export function setRunSession(db: Db, id: string, sessionId: string): void {
  stmt(db, 'UPDATE cron_runs SET session_id = ? WHERE id = ?').run(sessionId, id);
}

export function setRunTurn(db: Db, id: string, turnId: string): void {
  stmt(db, 'UPDATE cron_runs SET turn_id = ? WHERE id = ?').run(turnId, id);
}

/** Ends a running run; false when it had ended already (the first outcome stays). */
export function finishRun(
  db: Db,
  id: string,
  status: Exclude<CronRunStatus, 'running'>,
  extra: { error?: string | null; reply?: string | null } = {},
): boolean {
  return (
    stmt(
      db,
      "UPDATE cron_runs SET status = ?, ended_at = ?, error = ?, reply = ? WHERE id = ? AND status = 'running'",
    ).run(status, isoNow(), extra.error ?? null, extra.reply ?? null, id).changes > 0
  );
}

export function addNotifyResult(db: Db, id: string, result: NotifyResult): void {
  db.transaction(() => {
    const run = getRun(db, id);
    if (!run) return;
    stmt(db, 'UPDATE cron_runs SET notify_results = ? WHERE id = ?').run(
      JSON.stringify([...run.notify_results, result]),
      id,
    );
  }).immediate();
}

/** Adds or updates (by approval_id) an approval asked during the run. */
export function putRunApproval(db: Db, id: string, a: ApprovalRecord): void {
  db.transaction(() => {
    const run = getRun(db, id);
    if (!run) return;
    const rest = run.approvals.filter((x) => x.approval_id !== a.approval_id);
    stmt(db, 'UPDATE cron_runs SET approvals = ? WHERE id = ?').run(
      JSON.stringify([...rest, a]),
      id,
    );
  }).immediate();
}

/** Newest first. */
export function listRuns(db: Db, taskId: string, limit = RUNS_KEPT): CronRun[] {
  return stmt<[string, number]>(
    db,
    `SELECT ${RUN_COLS} FROM cron_runs WHERE task_id = ? ORDER BY started_at DESC, id DESC LIMIT ?`,
  )
    .all(taskId, limit)
    .map(toRun);
}

export function runningRuns(db: Db): CronRun[] {
  return stmt(db, `SELECT ${RUN_COLS} FROM cron_runs WHERE status = 'running' ORDER BY started_at`)
    .all()
    .map(toRun);
}

export function runningRunOf(db: Db, taskId: string): CronRun | undefined {
  const r = stmt<[string]>(
    db,
    `SELECT ${RUN_COLS} FROM cron_runs WHERE task_id = ? AND status = 'running'`,
  ).get(taskId);
  return r === undefined ? undefined : toRun(r);
}

export type RunView = z.infer<typeof cronRunSchema>;

export function runView(r: CronRun): RunView {
  return {
    id: r.id,
    task_id: r.task_id,
    trigger: r.trigger,
    scheduled_for: r.scheduled_for,
    status: r.status,
    session_id: r.session_id,
    started_at: r.started_at,
    ended_at: r.ended_at,
    error: r.error,
    notify_results: r.notify_results,
    approvals: r.approvals,
  };
}

/** The text of the last assistant message written since `since`: a run's final reply. */
export function lastReplySince(db: Db, sessionId: string, since: string): string | null {
  const r = stmt<[string, string], { content: string }>(
    db,
    "SELECT content FROM messages WHERE session_id = ? AND role = 'assistant' AND created_at >= ? ORDER BY seq DESC LIMIT 1",
  ).get(sessionId, since);
  if (!r) return null;
  const parsed = z.object({ text: z.string() }).safeParse(JSON.parse(r.content));
  return parsed.success ? parsed.data.text : null;
}

/** The newest turn of a session started at or after `since` (a run whose worker died before it saved the turn id). */
export function turnOfRun(
  db: Db,
  sessionId: string,
  since: string,
): { id: string; status: string; error: string | null } | undefined {
  return stmt<[string, string], { id: string; status: string; error: string | null }>(
    db,
    'SELECT id, status, error FROM turns WHERE session_id = ? AND started_at >= ? ORDER BY started_at DESC LIMIT 1',
  ).get(sessionId, since);
}
