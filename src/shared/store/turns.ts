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
  /** The seq of the turn's user message (null until it is stored, or for turns from before v12). */
  first_seq: number | null;
  reply: string | null;
  stop_reason: string | null;
  /** Why it failed or was interrupted by svc (worker_crashed, provider_…, restarted). */
  reason: string | null;
}

export function startTurnRow(db: Db, t: { id: string; session_id: string; origin: string }): void {
  stmt(
    db,
    "INSERT INTO turns (id, session_id, status, origin, started_at) VALUES (?, ?, 'running', ?, ?)",
  ).run(t.id, t.session_id, t.origin, isoNow());
}

/** Ends a running turn; a turn already ended keeps its first outcome. */
export function endTurnRow(
  db: Db,
  id: string,
  status: Exclude<TurnStatus, 'running'>,
  extra: {
    error?: string;
    reason?: string;
    usage?: unknown;
    reply?: string;
    stop_reason?: string;
  } = {},
): boolean {
  const r = stmt(
    db,
    "UPDATE turns SET status = ?, ended_at = ?, error = ?, reason = ?, usage = ?, reply = ?, stop_reason = ? WHERE id = ? AND status = 'running'",
  ).run(
    status,
    isoNow(),
    extra.error ?? null,
    extra.reason ?? null,
    extra.usage === undefined ? null : JSON.stringify(extra.usage),
    extra.reply ?? null,
    extra.stop_reason ?? null,
    id,
  );
  return r.changes > 0;
}

/** Notes the turn's user message, where its messages begin. */
export function setTurnFirstSeq(db: Db, id: string, seq: number): void {
  stmt(db, 'UPDATE turns SET first_seq = ? WHERE id = ?').run(seq, id);
}

/** Where the next turn of the session begins (its messages end before it); null for the last one. */
export function nextTurnFirstSeq(db: Db, sessionId: string, firstSeq: number): number | null {
  const r = stmt<[string, number], { next: number | null }>(
    db,
    'SELECT MIN(first_seq) AS next FROM turns WHERE session_id = ? AND first_seq > ?',
  ).get(sessionId, firstSeq);
  return r?.next ?? null;
}

export function getTurnRow(db: Db, id: string): TurnRow | undefined {
  return stmt<[string], TurnRow>(db, 'SELECT * FROM turns WHERE id = ?').get(id);
}

/** Turns left `running` by a process that died: marked failed at the next start. */
export function failOrphanTurns(db: Db, reason: string): number {
  return stmt(
    db,
    "UPDATE turns SET status = 'failed', ended_at = ?, error = ? WHERE status = 'running'",
  ).run(isoNow(), reason).changes;
}

/** A session's turns, newest first, `offset`/`limit` a page. */
export function listTurns(
  db: Db,
  sessionId: string,
  q: { offset: number; limit: number },
): TurnRow[] {
  return stmt<[string, number, number], TurnRow>(
    db,
    'SELECT * FROM turns WHERE session_id = ? ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?',
  ).all(sessionId, q.limit, q.offset);
}
