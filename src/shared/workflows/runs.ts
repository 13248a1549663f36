import { z } from 'zod';
import {
  workflowRunStatus,
  workflowStepState,
  type workflowRunSchema,
} from '../protocol/answers/workflows.js';
import type { Db } from '../store/db.js';
import { isoNow, newId, stmt } from '../store/util.js';

/** A run's schemas are the API's (GET /api/workflows/runs/{id} answers the row as it is). */
export type RunStatus = z.infer<typeof workflowRunStatus>;
export type StepState = z.infer<typeof workflowStepState>;
export type WorkflowRun = z.infer<typeof workflowRunSchema>;

interface Row extends Omit<WorkflowRun, 'inputs' | 'steps' | 'status'> {
  status: string;
  inputs: string;
  steps: string;
}

const COLS =
  'id, workflow, session_id, status, inputs, steps, error, failed_step, started_at, ended_at';

function toRun(r: Row): WorkflowRun {
  return {
    ...r,
    status: workflowRunStatus.catch('failed').parse(r.status),
    inputs: z.record(z.string(), z.unknown()).catch({}).parse(JSON.parse(r.inputs)),
    steps: z.record(z.string(), workflowStepState).catch({}).parse(JSON.parse(r.steps)),
  };
}

export function createRun(
  db: Db,
  r: { workflow: string; session_id: string; inputs: Record<string, unknown> },
): WorkflowRun {
  const id = newId('wr');
  stmt(
    db,
    `INSERT INTO workflow_runs (${COLS}) VALUES (?, ?, ?, 'queued', ?, '{}', NULL, NULL, ?, NULL)`,
  ).run(id, r.workflow, r.session_id, JSON.stringify(r.inputs), isoNow());
  return getRun(db, id)!;
}

export function getRun(db: Db, id: string): WorkflowRun | undefined {
  const r = stmt<[string], Row>(db, `SELECT ${COLS} FROM workflow_runs WHERE id = ?`).get(id);
  return r && toRun(r);
}

/** Newest first. */
export function listRuns(db: Db, workflow: string, limit = 20): WorkflowRun[] {
  return stmt<[string, number], Row>(
    db,
    `SELECT ${COLS} FROM workflow_runs WHERE workflow = ? ORDER BY started_at DESC, id DESC LIMIT ?`,
  )
    .all(workflow, limit)
    .map(toRun);
}

export function lastRun(db: Db, workflow: string): WorkflowRun | undefined {
  return listRuns(db, workflow, 1)[0];
}

export function setRunStatus(
  db: Db,
  id: string,
  status: RunStatus,
  end?: { error?: string; failed_step?: string },
): void {
  const over = status === 'completed' || status === 'failed' || status === 'interrupted';
  stmt(
    db,
    'UPDATE workflow_runs SET status = ?, error = coalesce(?, error), failed_step = coalesce(?, failed_step), ended_at = ? WHERE id = ?',
  ).run(status, end?.error ?? null, end?.failed_step ?? null, over ? isoNow() : null, id);
}

export function setStepState(db: Db, id: string, step: string, state: StepState): void {
  db.transaction(() => {
    const run = getRun(db, id);
    if (!run) return;
    stmt(db, 'UPDATE workflow_runs SET steps = ? WHERE id = ?').run(
      JSON.stringify({ ...run.steps, [step]: state }),
      id,
    );
  }).immediate();
}

/** A run whose turn died with its worker (or ran past a restart's drain) ends failed; answers the runs it ended. */
export function failOpenRuns(db: Db, sessionId: string, error: string): WorkflowRun[] {
  const open = stmt<[string], Row>(
    db,
    `SELECT ${COLS} FROM workflow_runs WHERE session_id = ? AND status IN ('queued', 'running')`,
  )
    .all(sessionId)
    .map(toRun);
  for (const r of open) setRunStatus(db, r.id, 'failed', { error });
  return open;
}
