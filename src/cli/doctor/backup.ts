import { existsSync } from 'node:fs';
import { ConfigError } from '../../shared/config/load.js';
import { nextFires, machineTimezone } from '../../shared/cron/schedule.js';
import { lastBackup } from '../../shared/store/backups.js';
import { Database } from '../../shared/store/sqlite.js';
import type { Check, Context } from './check.js';

/**
 * Backups: a schedule whose last backup failed, or is older than two of its periods, is a warning
 * (a backup you think you have and do not is the worst kind); no schedule is fine, said plainly.
 */
export function checkBackup(ctx: Context, now = new Date()): Check {
  const schedule = ctx.config instanceof ConfigError ? undefined : ctx.config.backup.schedule;
  let last: ReturnType<typeof lastBackup>;
  if (existsSync(ctx.paths.db)) {
    let db: InstanceType<typeof Database> | undefined;
    try {
      db = new Database(ctx.paths.db, { fileMustExist: true });
      db.pragma('busy_timeout = 3000');
      last = lastBackup(db);
    } catch {
      last = undefined; // the database check says what is wrong with the file
    } finally {
      db?.close();
    }
  }
  const fix =
    'svc backup create makes one now; svc logs --process cron shows why a scheduled one failed';
  if (last && !last.ok)
    return {
      id: 'backup',
      status: 'warn',
      message: `the last backup failed (${last.ended_at}): ${last.error}`,
      fix,
    };
  if (!schedule)
    return {
      id: 'backup',
      status: 'ok',
      message: last
        ? `no scheduled backups; the last one was made ${last.ended_at} (${last.file})`
        : 'no scheduled backups (backup.schedule in config.yml; docs/backups.md)',
    };
  if (!last)
    return {
      id: 'backup',
      status: 'ok',
      message: `backups scheduled (${schedule}); none made yet`,
    };
  const [, second] = nextFires(schedule, machineTimezone(), new Date(last.ended_at), 2);
  if (second && second.getTime() < now.getTime())
    return {
      id: 'backup',
      status: 'warn',
      message: `backups are scheduled (${schedule}) but the last one is from ${last.ended_at}, more than two periods ago: is svc running?`,
      fix,
    };
  return {
    id: 'backup',
    status: 'ok',
    message: `backups scheduled (${schedule}); the last one ${last.ended_at}`,
  };
}
