import type { Db } from './db.js';
import { closeOpenCalls } from './open-calls.js';
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

/** A turn begins on record; it throws when the id is on record already (svc ended it before it began). */
export function startTurnRow(db: Db, t: TurnRef): void {
  stmt(
    db,
    "INSERT INTO turns (id, session_id, status, origin, started_at) VALUES (?, ?, 'running', ?, ?)",
  ).run(t.id, t.session_id, t.origin, isoNow());
}

/** A turn as the process that ends it knows it (its row may not exist yet: a worker died before taking it). */
export interface TurnRef {
  id: string;
  session_id: string;
  origin: string;
}

/**
 * Ends a running turn, writing its row when there is none yet; a turn already ended keeps its
 * first outcome. Answers whether this call ended it.
 */
export function endTurnRow(
  db: Db,
  t: TurnRef,
  status: Exclude<TurnStatus, 'running'>,
  extra: {
    error?: string;
    reason?: string;
    usage?: unknown;
    reply?: string;
    stop_reason?: string;
  } = {},
): boolean {
  const now = isoNow();
  const r = stmt(
    db,
    `INSERT INTO turns (id, session_id, status, origin, started_at, ended_at, error, reason, usage, reply, stop_reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at,
       error = excluded.error, reason = excluded.reason, usage = excluded.usage,
       reply = excluded.reply, stop_reason = excluded.stop_reason
     WHERE turns.status = 'running'`,
  ).run(
    t.id,
    t.session_id,
    status,
    t.origin,
    now,
    now,
    extra.error ?? null,
    extra.reason ?? null,
    extra.usage === undefined ? null : JSON.stringify(extra.usage),
    extra.reply ?? null,
    extra.stop_reason ?? null,
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

/**
 * Turns left `running` by a process that died: marked failed at the next start, each tool call
 * they left open given a result (as endTurn does), in one transaction.
 */
export function failOrphanTurns(db: Db, reason: string): number {
  return db
    .transaction(() => {
      const orphans = stmt<[], TurnRow>(db, "SELECT * FROM turns WHERE status = 'running'").all();
      for (const t of orphans) closeOpenCalls(db, t, 'failed');
      return stmt(
        db,
        "UPDATE turns SET status = 'failed', ended_at = ?, error = ? WHERE status = 'running'",
      ).run(isoNow(), reason).changes;
    })
    .immediate();
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
