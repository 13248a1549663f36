import type { Db } from './db.js';
import { isoNow, stmt } from './util.js';

/** "Allow for this session": remembered per session, so every agent worker sees it. */
export function hasGrant(db: Db, sessionId: string, key: string): boolean {
  return (
    stmt<[string, string], { n: number }>(
      db,
      'SELECT 1 AS n FROM permission_grants WHERE session_id = ? AND grant_key = ?',
    ).get(sessionId, key) !== undefined
  );
}

export function addGrant(db: Db, sessionId: string, key: string): void {
  stmt(
    db,
    'INSERT OR IGNORE INTO permission_grants (session_id, grant_key, created_at) VALUES (?, ?, ?)',
  ).run(sessionId, key, isoNow());
}
