import type { Database } from 'better-sqlite3';

/** Versioned schema changes, applied in order, each exactly once. Append; never edit a shipped one. */
export interface Migration {
  version: number;
  name: string;
  up: (db: Database) => void;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'meta',
    up: (db) => {
      db.exec(`CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
    },
  },
];

/** Applies pending migrations in one transaction each; returns the versions it applied. */
export function migrate(db: Database, list: Migration[] = migrations): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((r) => (r as { version: number }).version),
  );
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...list.map((m) => m.version));
  if (newest > known) {
    throw new Error(`svc.db has schema version ${newest}, newer than this svc knows (${known}); upgrade svc or restore a backup`);
  }
  const done: number[] = [];
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      m.up(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    })();
    done.push(m.version);
  }
  return done;
}
