import { registerSearchFunctions } from '../search/text.js';
import { migrate } from './migrations.js';
import { Database, type SqliteDatabase } from './sqlite.js';

export type Db = SqliteDatabase;

/** Opens svc.db the way every process should: WAL, a busy timeout, foreign keys on. */
export function openDb(file: string, opts: { readonly?: boolean } = {}): Db {
  const db = new Database(file, {
    readonly: opts.readonly ?? false,
    fileMustExist: opts.readonly ?? false,
  });
  if (!opts.readonly) db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  registerSearchFunctions(db);
  return db;
}

/** The supervisor's start: open (creating if needed) and bring the schema up to date. */
export function openAndMigrate(file: string): { db: Db; applied: number[] } {
  const db = openDb(file);
  const applied = migrate(db);
  return { db, applied };
}
