import type { Db } from '../store/db.js';
import { isoNow, stmt } from '../store/util.js';

/** Names of the skills switched off (a skill with no row is on). */
export function disabledSkills(db: Db): Set<string> {
  return new Set(
    stmt<[], { name: string }>(db, 'SELECT name FROM skill_state WHERE enabled = 0')
      .all()
      .map((r) => r.name),
  );
}

export function setSkillEnabled(db: Db, name: string, enabled: boolean): void {
  stmt(
    db,
    'INSERT INTO skill_state (name, enabled, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at',
  ).run(name, enabled ? 1 : 0, isoNow());
}
