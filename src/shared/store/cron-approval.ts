import type { Db } from './db.js';
import { stmt } from './util.js';

/** The approval timeout a cron task set for the run going in this session; undefined follows config. (Apart from cron.ts so the agent does not load croner.) */
export function cronApprovalTimeout(db: Db, sessionId: string): number | undefined {
  const r = stmt<[string], { s: number | null }>(
    db,
    "SELECT t.approval_timeout_seconds AS s FROM cron_runs r JOIN cron_tasks t ON t.id = r.task_id WHERE r.session_id = ? AND r.status = 'running'",
  ).get(sessionId);
  return r?.s ?? undefined;
}
