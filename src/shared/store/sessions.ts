import { z } from 'zod';
import { StoreError } from '../errors.js';
import { permissionModes, reasoningEfforts } from '../protocol/session-modes.js';
import { decodeNetwork, encodeNetwork, type NetworkSetting } from '../sandbox/network.js';
import type { Db } from './db.js';
import { decodeCursor, encodeCursor, isoNow, newId, stmt } from './util.js';

export { permissionModes, reasoningEfforts };
export type ReasoningEffort = (typeof reasoningEfforts)[number];
export type PermissionMode = (typeof permissionModes)[number];

/** A session as the API shows it. */
export interface Session {
  id: string;
  title: string;
  /** A key of config `models`; null follows the default slot. */
  model_id: string | null;
  reasoning_effort: ReasoningEffort;
  show_reasoning: boolean;
  permission_mode: PermissionMode;
  working_dir: string | null;
  /** The sandbox's network: on, off or a host list; null follows permissions.yml (else on). */
  network: NetworkSetting | null;
  /** The messaging platform whose chat this session is (telegram, messenger); null for others. */
  channel: string | null;
  created_at: string;
  updated_at: string;
  message_count: number;
}

/** The stored row (SQLite has no booleans). Also what the trash keeps. */
export const sessionRowSchema = z.object({
  id: z.string(),
  title: z.string(),
  model_id: z.string().nullable(),
  reasoning_effort: z.enum(reasoningEfforts),
  show_reasoning: z.number().int(),
  permission_mode: z.enum(permissionModes),
  working_dir: z.string().nullable(),
  // Rows trashed before the column existed have none.
  network: z.string().nullable().default(null),
  channel: z.string().nullable().default(null),
  created_at: z.string(),
  updated_at: z.string(),
  message_count: z.number().int(),
});
export type SessionRow = z.infer<typeof sessionRowSchema>;

/** What a client may set; the route checks model_id and working_dir against config and disk. */
export interface SessionSettings {
  title?: string;
  model_id?: string | null;
  reasoning_effort?: ReasoningEffort;
  show_reasoning?: boolean;
  permission_mode?: PermissionMode;
  working_dir?: string | null;
  network?: NetworkSetting | null;
}

export const sessionDefaults = {
  title: 'New session',
  model_id: null,
  reasoning_effort: 'medium',
  show_reasoning: true,
  permission_mode: 'interactive',
  working_dir: null,
  network: null,
} as const satisfies Required<SessionSettings>;

export const SESSION_ID = /^s_[a-z0-9]{21}$/;

export function toSession(r: SessionRow): Session {
  return { ...r, show_reasoning: r.show_reasoning === 1, network: decodeNetwork(r.network) };
}

const COLS =
  'id, title, model_id, reasoning_effort, show_reasoning, permission_mode, working_dir, network, channel, created_at, updated_at, message_count';

export function getSessionRow(db: Db, id: string): SessionRow | undefined {
  return stmt<[string], SessionRow>(
    db,
    `SELECT ${COLS} FROM sessions WHERE id = ? AND trash_id IS NULL`,
  ).get(id);
}

export function getSession(db: Db, id: string): Session | undefined {
  const r = getSessionRow(db, id);
  return r && toSession(r);
}

/** The session, or a 404 a person can act on. */
export function requireSession(db: Db, id: string): Session {
  const s = getSession(db, id);
  if (!s) throw sessionNotFound(id);
  return s;
}

export function sessionNotFound(id: string): StoreError {
  return new StoreError(
    'not_found',
    `There is no session ${JSON.stringify(id)}; it may have been deleted (see GET /api/trash). GET /api/sessions lists the sessions.`,
  );
}

export function insertSessionRow(
  db: Db,
  r: Omit<SessionRow, 'network' | 'channel'> & { network?: string | null; channel?: string | null },
): void {
  stmt(
    db,
    `INSERT INTO sessions (${COLS}) VALUES (@id, @title, @model_id, @reasoning_effort, @show_reasoning, @permission_mode, @working_dir, @network, @channel, @created_at, @updated_at, @message_count)`,
  ).run({ ...r, network: r.network ?? null, channel: r.channel ?? null });
}

/** Creates a session; `id` is for restores and tests, new sessions get a fresh one. */
export function createSession(
  db: Db,
  input: SessionSettings & { id?: string; channel?: string } = {},
): Session {
  const now = isoNow();
  const s = {
    ...sessionDefaults,
    channel: null,
    ...stripUndefined(input),
    id: input.id ?? newId('s'),
    created_at: now,
    updated_at: now,
    message_count: 0,
  };
  insertSessionRow(db, {
    ...s,
    show_reasoning: s.show_reasoning ? 1 : 0,
    network: encodeNetwork(s.network),
  });
  return s;
}

/** Applies the given fields; undefined when there is no such session. */
export function updateSession(db: Db, id: string, patch: SessionSettings): Session | undefined {
  return db
    .transaction(() => {
      const cur = getSessionRow(db, id);
      if (!cur) return undefined;
      const p = stripUndefined(patch);
      const next: SessionRow = {
        ...cur,
        ...p,
        show_reasoning:
          p.show_reasoning === undefined ? cur.show_reasoning : p.show_reasoning ? 1 : 0,
        network: p.network === undefined ? cur.network : encodeNetwork(p.network),
        updated_at: isoNow(),
      };
      stmt(
        db,
        'UPDATE sessions SET title = @title, model_id = @model_id, reasoning_effort = @reasoning_effort, show_reasoning = @show_reasoning, permission_mode = @permission_mode, working_dir = @working_dir, network = @network, updated_at = @updated_at WHERE id = @id AND trash_id IS NULL',
      ).run(next);
      return toSession(next);
    })
    .immediate();
}

/** Sets the title of a session still called by the default one; undefined when it has another title by now (or is gone). */
export function titleIfUntitled(db: Db, id: string, title: string): Session | undefined {
  const changed = stmt(
    db,
    'UPDATE sessions SET title = ?, updated_at = ? WHERE id = ? AND title = ? AND trash_id IS NULL',
  ).run(title, isoNow(), id, sessionDefaults.title).changes;
  return changed > 0 ? getSession(db, id) : undefined;
}

export interface SessionCursor {
  created_at: string;
  id: string;
}

const cursorSchema = z.tuple([z.iso.datetime(), z.string().regex(SESSION_ID)]);

/** Decodes a `next_cursor` from listSessions; undefined when it is not one. */
export function parseSessionCursor(cursor: string): SessionCursor | undefined {
  const r = cursorSchema.safeParse(decodeCursor(cursor));
  return r.success ? { created_at: r.data[0], id: r.data[1] } : undefined;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Newest first (created_at, then id); keyset pagination, so pages never skip or repeat under inserts. */
export function listSessions(
  db: Db,
  opts: { limit: number; after?: SessionCursor },
): Page<Session> {
  const rows = opts.after
    ? stmt<[string, string, number], SessionRow>(
        db,
        `SELECT ${COLS} FROM sessions WHERE trash_id IS NULL AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
      ).all(opts.after.created_at, opts.after.id, opts.limit + 1)
    : stmt<[number], SessionRow>(
        db,
        `SELECT ${COLS} FROM sessions WHERE trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ?`,
      ).all(opts.limit + 1);
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toSession),
    next_cursor: more && last ? encodeCursor([last.created_at, last.id]) : null,
  };
}

const pageCache = new WeakMap<Db, { version: string; pages: Map<string, Buffer> }>();
const MAX_CACHED_PAGES = 32;

/**
 * listSessions as UTF-8 JSON, remembered until svc.db changes: the list is read far more often
 * than it changes (every client refresh), and the query plus serialisation is most of a request's
 * cost. `data_version` moves when another connection (any process) commits, `total_changes()`
 * when this one writes; either change empties the cache.
 */
export function listSessionsJson(db: Db, opts: { limit: number; after?: SessionCursor }): Buffer {
  const version = `${stmt(db, 'PRAGMA data_version /* sessions page cache */').pluck().get() as number}:${stmt(db, 'SELECT total_changes() /* sessions page cache */').pluck().get() as number}`;
  let c = pageCache.get(db);
  if (!c || c.version !== version || c.pages.size >= MAX_CACHED_PAGES)
    pageCache.set(db, (c = { version, pages: new Map() }));
  const key = `${opts.limit}|${opts.after?.created_at ?? ''}|${opts.after?.id ?? ''}`;
  let json = c.pages.get(key);
  if (json === undefined)
    c.pages.set(key, (json = Buffer.from(JSON.stringify(listSessions(db, opts)))));
  return json;
}

/**
 * Marks a live session as in the trash (item `trashId`): from then on it reads as absent, and its
 * messages, artifacts and goal stay where they are until the trash item goes (a trigger deletes
 * the session then, and foreign keys cascade). False when there is no live session `id`.
 */
export function markSessionTrashed(db: Db, id: string, trashId: string): boolean {
  return (
    stmt(db, 'UPDATE sessions SET trash_id = ? WHERE id = ? AND trash_id IS NULL').run(trashId, id)
      .changes > 0
  );
}

/** A trashed session's stored row (read by its trash item), or undefined when there is none. */
export function getTrashedSessionRow(db: Db, id: string, trashId: string): SessionRow | undefined {
  return stmt<[string, string], SessionRow>(
    db,
    `SELECT ${COLS} FROM sessions WHERE id = ? AND trash_id = ?`,
  ).get(id, trashId);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
