import type { Db } from './db.js';
import { isoNow, stmt } from './util.js';

export type TurnStatus = 'running' | 'completed' | 'failed' | 'interrupted';

export interface TurnRow {
  id: string;
  session_id: string;
  status: TurnStatus;
  origin: string;
  started_at: string;
  ended_at: string | null;
  error: string | null;
  usage: string | null;
}

export function startTurnRow(db: Db, t: { id: string; session_id: string; origin: string }): void {
  stmt(db, "INSERT INTO turns (id, session_id, status, origin, started_at) VALUES (?, ?, 'running', ?, ?)").run(t.id, t.session_id, t.origin, isoNow());
}

/** Ends a running turn; a turn already ended keeps its first outcome. */
export function endTurnRow(db: Db, id: string, status: Exclude<TurnStatus, 'running'>, extra: { error?: string; usage?: unknown } = {}): boolean {
  const r = stmt(db, "UPDATE turns SET status = ?, ended_at = ?, error = ?, usage = ? WHERE id = ? AND status = 'running'").run(
    status,
    isoNow(),
    extra.error ?? null,
    extra.usage === undefined ? null : JSON.stringify(extra.usage),
    id,
  );
  return r.changes > 0;
}

export function getTurnRow(db: Db, id: string): TurnRow | undefined {
  return stmt<[string], TurnRow>(db, 'SELECT * FROM turns WHERE id = ?').get(id);
}

/** Turns left `running` by a process that died: marked failed at the next start. */
export function failOrphanTurns(db: Db, reason: string): number {
  return stmt(db, "UPDATE turns SET status = 'failed', ended_at = ?, error = ? WHERE status = 'running'").run(isoNow(), reason).changes;
}
