import { z } from 'zod';
import type { Db } from './db.js';
import { isoNow, newId, stmt } from './util.js';

/** A file a session produced (later issues record them as tools write files). */
export const artifactRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  path: z.string(),
  size: z.number().int(),
  mime: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Artifact = z.infer<typeof artifactRowSchema>;

const COLS = 'id, session_id, path, size, mime, created_at, updated_at';

/** Records (or refreshes) the artifact at `path` for a session; one row per path. */
export function upsertArtifact(
  db: Db,
  sessionId: string,
  a: { path: string; size: number; mime: string },
): Artifact {
  const now = isoNow();
  stmt(
    db,
    `INSERT INTO artifacts (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id, path) DO UPDATE SET size = excluded.size, mime = excluded.mime, updated_at = excluded.updated_at`,
  ).run(newId('a'), sessionId, a.path, a.size, a.mime, now, now);
  return stmt<[string, string], Artifact>(
    db,
    `SELECT ${COLS} FROM artifacts WHERE session_id = ? AND path = ?`,
  ).get(sessionId, a.path)!;
}

/** A session's artifacts, oldest first. */
export function listArtifacts(db: Db, sessionId: string): Artifact[] {
  return stmt<[string], Artifact>(
    db,
    `SELECT ${COLS} FROM artifacts WHERE session_id = ? ORDER BY created_at, id`,
  ).all(sessionId);
}

export function insertArtifactRow(db: Db, a: Artifact): void {
  stmt(
    db,
    `INSERT INTO artifacts (${COLS}) VALUES (@id, @session_id, @path, @size, @mime, @created_at, @updated_at)`,
  ).run(a);
}

export function getArtifact(db: Db, sessionId: string, id: string): Artifact | undefined {
  return stmt<[string, string], Artifact>(
    db,
    `SELECT ${COLS} FROM artifacts WHERE session_id = ? AND id = ?`,
  ).get(sessionId, id);
}

/** An artifact by its id alone (ids are unique across sessions), e.g. to send it over a channel. */
export function getArtifactById(db: Db, id: string): Artifact | undefined {
  return stmt<[string], Artifact>(db, `SELECT ${COLS} FROM artifacts WHERE id = ?`).get(id);
}
