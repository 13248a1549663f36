import { z } from 'zod';
import { StoreError } from '../errors.js';
import type { Db } from './db.js';
import type { Page } from './sessions.js';
import { decodeCursor, encodeCursor, isoNow, newId, stmt } from './util.js';

export const messageRoles = ['user', 'assistant', 'tool', 'system'] as const;
export type MessageRole = (typeof messageRoles)[number];

export interface Message {
  id: string;
  session_id: string;
  /** 1, 2, 3, … within the session: the transcript order. */
  seq: number;
  role: MessageRole;
  /** Any JSON: a string, or blocks (text, tool calls, tool results, …) as later issues define them. */
  content: unknown;
  created_at: string;
}

/** The stored row: content is JSON text. Also what the trash keeps. */
export const messageRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  seq: z.number().int(),
  role: z.enum(messageRoles),
  content: z.string(),
  created_at: z.string(),
});
export type MessageRow = z.infer<typeof messageRowSchema>;

const COLS = 'id, session_id, seq, role, content, created_at';

export function toMessage(r: MessageRow): Message {
  return { ...r, content: JSON.parse(r.content) as unknown };
}

/**
 * Appends one message to a session's transcript, in one transaction with the session's
 * message_count and updated_at. Throws a not_found StoreError when the session does not exist.
 * Publish the event (session:<id>) after this returns: the message is committed by then.
 */
export function appendMessage(
  db: Db,
  sessionId: string,
  msg: { role: MessageRole; content: unknown; created_at?: string },
): Message {
  const content = JSON.stringify(msg.content);
  if (content === undefined) throw new TypeError('message content must be JSON-serialisable');
  return db
    .transaction(() => {
      const now = msg.created_at ?? isoNow();
      const bumped = stmt(
        db,
        'UPDATE sessions SET message_count = message_count + 1, updated_at = ? WHERE id = ? AND trash_id IS NULL',
      ).run(now, sessionId);
      if (bumped.changes === 0)
        throw new StoreError(
          'not_found',
          `There is no session ${JSON.stringify(sessionId)} to add a message to.`,
        );
      const { seq } = stmt<[string], { seq: number }>(
        db,
        'SELECT coalesce(max(seq), 0) + 1 AS seq FROM messages WHERE session_id = ?',
      ).get(sessionId)!;
      const row: MessageRow = {
        id: newId('m'),
        session_id: sessionId,
        seq,
        role: msg.role,
        content,
        created_at: now,
      };
      insertMessageRow(db, row);
      return toMessage(row);
    })
    .immediate();
}

export function insertMessageRow(db: Db, r: MessageRow): void {
  stmt(
    db,
    `INSERT INTO messages (${COLS}) VALUES (@id, @session_id, @seq, @role, @content, @created_at)`,
  ).run(r);
}

/** A session's rows after `afterSeq`, oldest first (from the (session_id, seq) index). */
export function messageRowsAfter(db: Db, sessionId: string, afterSeq: number): MessageRow[] {
  return stmt<[string, number], MessageRow>(
    db,
    `SELECT ${COLS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq`,
  ).all(sessionId, afterSeq);
}

/** A session's system messages after `afterSeq`, newest first, read lazily (from a partial index). */
export function systemRowsNewestFirst(
  db: Db,
  sessionId: string,
  afterSeq: number,
): IterableIterator<Pick<MessageRow, 'seq' | 'content'>> {
  return stmt<[string, number], Pick<MessageRow, 'seq' | 'content'>>(
    db,
    "SELECT seq, content FROM messages WHERE session_id = ? AND role = 'system' AND seq > ? ORDER BY seq DESC",
  ).iterate(sessionId, afterSeq);
}

/** A messages cursor: the last seq seen. Undefined when the text is not one of ours. */
export function parseMessageCursor(cursor: string): number | undefined {
  const v = decodeCursor(cursor);
  return z.object({ after_seq: z.number().int().min(0) }).safeParse(v).data?.after_seq;
}

/** One message of a session, whole (an event carried only its summary). */
export function getMessage(db: Db, sessionId: string, id: string): Message | undefined {
  const r = stmt<[string, string], MessageRow>(
    db,
    `SELECT ${COLS} FROM messages WHERE id = ? AND session_id = ?`,
  ).get(id, sessionId);
  return r === undefined ? undefined : toMessage(r);
}

/** Oldest first, `limit` at a time. */
export function listMessages(
  db: Db,
  sessionId: string,
  opts: { limit: number; afterSeq?: number },
): Page<Message> {
  const rows = stmt<[string, number, number], MessageRow>(
    db,
    `SELECT ${COLS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
  ).all(sessionId, opts.afterSeq ?? 0, opts.limit + 1);
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toMessage),
    next_cursor: more && last ? encodeCursor({ after_seq: last.seq }) : null,
  };
}
