import { Database } from '../store/sqlite.js';
import { migrations } from '../store/migrations.js';

/** The schema this svc writes: its newest migration. */
export const knownSchema = (): number => Math.max(0, ...migrations.map((m) => m.version));

/** The newest migration applied to a database file (0 for one svc never migrated). */
export function schemaVersionOf(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const has = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    if (!has) return 0;
    const row = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as {
      v: number | null;
    };
    return row.v ?? 0;
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check`'s findings; empty when the file is sound. */
export function integrityProblems(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
  } catch (err) {
    return [(err as Error).message];
  } finally {
    db.close();
  }
}
