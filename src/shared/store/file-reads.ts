import type { Db } from './db.js';
import { isoNow, stmt } from './util.js';

/** What a session last saw of a file: write_file and edit_file compare it with the file now. */
export interface FileRead {
  session_id: string;
  /** Absolute path. */
  path: string;
  sha256: string;
  size: number;
  mtime_ms: number;
  read_at: string;
}

const COLS = 'session_id, path, sha256, size, mtime_ms, read_at';

/** Records (or refreshes) a read; also called after a tool wrote the file, since the agent knows that content. */
export function recordFileRead(db: Db, r: Omit<FileRead, 'read_at'> & { read_at?: string }): void {
  stmt(
    db,
    `INSERT INTO file_reads (${COLS}) VALUES (@session_id, @path, @sha256, @size, @mtime_ms, @read_at)
    ON CONFLICT (session_id, path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, mtime_ms = excluded.mtime_ms, read_at = excluded.read_at`,
  ).run({ ...r, read_at: r.read_at ?? isoNow() });
}

export function getFileRead(db: Db, sessionId: string, path: string): FileRead | undefined {
  return stmt<[string, string], FileRead>(
    db,
    `SELECT ${COLS} FROM file_reads WHERE session_id = ? AND path = ?`,
  ).get(sessionId, path);
}

/** Forgets a path for every session (the file was deleted: nobody has seen what will be there next). */
export function forgetFileReads(db: Db, path: string): void {
  stmt(db, 'DELETE FROM file_reads WHERE path = ?').run(path);
}

/** Forgets everything a session read (the session is gone). */
export function forgetSessionFileReads(db: Db, sessionId: string): number {
  return stmt(db, 'DELETE FROM file_reads WHERE session_id = ?').run(sessionId).changes;
}
