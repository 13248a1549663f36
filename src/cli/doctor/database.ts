import { existsSync } from 'node:fs';
import { z } from 'zod';
import { migrations } from '../../shared/store/migrations.js';
import { Database, type SqliteDatabase } from '../../shared/store/sqlite.js';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** svc.db: whether it opens, passes quick_check, and has a schema this svc can run. */
export function checkDatabase(ctx: Context): Check {
  const file = ctx.paths.db;
  if (!existsSync(file)) return ok('database', 'svc.db does not exist yet; "svc serve" creates it');
  const known = Math.max(...migrations.map((m) => m.version));
  const damaged = (why: string) =>
    fail(
      'database',
      `svc.db is damaged: ${why}`,
      `stop svc, keep a copy of ${file}, then restore it from a backup (or move it aside to start with an empty store)`,
    );
  let db: SqliteDatabase | undefined;
  try {
    // read-write (nothing is written) so closing cleans up the WAL files a read-only open would leave
    db = new Database(file, { fileMustExist: true });
    db.pragma('busy_timeout = 3000');
    const rows = z.array(z.object({ quick_check: z.string() })).parse(db.pragma('quick_check'));
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (problems.length > 0) return damaged(problems.slice(0, 3).join('; '));
    const hasTable =
      db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        .get() !== undefined;
    if (!hasTable)
      return warn(
        'database',
        'svc.db passes its integrity check but has no schema table: it was not made by svc, or never finished its first start',
        `move ${file} aside if svc serve refuses it`,
      );
    const { v } = z
      .object({ v: z.number().nullable() })
      .parse(db.prepare('SELECT max(version) AS v FROM schema_migrations').get());
    const have = v ?? 0;
    if (have > known)
      return fail(
        'database',
        `svc.db has schema version ${have}, made by a newer svc than this one (which knows ${known})`,
        'run the newer svc, or restore a backup made for this version',
      );
    if (have < known)
      return ok(
        'database',
        `svc.db passes quick_check; schema version ${have}, which "svc serve" brings to ${known} at its next start`,
      );
    return ok('database', `svc.db passes quick_check; schema version ${have} (current)`);
  } catch (err) {
    const e = err as { code?: string; message: string };
    if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED')
      return warn(
        'database',
        `svc.db is busy and could not be checked: ${e.message}`,
        'run svc doctor again in a moment',
      );
    if (e.code === 'SQLITE_CANTOPEN' || e.code === 'SQLITE_PERM' || e.code === 'SQLITE_READONLY')
      return warn(
        'database',
        `svc.db could not be opened to check it: ${e.message}`,
        `check the owner and modes of ${file} and its folder`,
      );
    if (typeof e.code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(e.code))
      return damaged(e.message);
    return warn('database', `svc.db could not be checked: ${e.message}`);
  } finally {
    db?.close();
  }
}
