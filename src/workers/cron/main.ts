import type { Config } from '../../shared/config/schema.js';
import { nextFires, scheduledTimeOf } from '../../shared/cron/schedule.js';
import { startChild } from '../../shared/child.js';
import { log } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { refusalOf } from '../../shared/errors.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import {
  getCronTask,
  listCronTasks,
  runningRunOf,
  setSchedFrom,
  type CronTask,
} from '../../shared/store/cron.js';
import { openDb, type Db } from '../../shared/store/db.js';
import { BackupSchedule } from './backups.js';
import { Runs } from './runs.js';
import { Scheduler } from './scheduler.js';

/**
 * The cron worker: owns the schedules of the enabled cron tasks (read from the store at start,
 * reloaded task by task when a route changes one) and starts each run as a turn through the
 * supervisor. It never loads the agent's code: a run is the same turn a chat sends.
 */
const paths = resolvePaths();
let runs: Runs | undefined;
let db: Db | undefined;
let config: Config | undefined;
const backups = new BackupSchedule(
  paths.home,
  () => db,
  () => config?.backup,
);
const endpoint = startChild('cron', () => (runs?.count ?? 0) + backups.busy);

const scheduler = new Scheduler((id, at) => void fire(id, at, 'schedule'));

async function fire(id: string, at: Date, trigger: 'schedule' | 'catch_up'): Promise<void> {
  if (!db || !runs) return;
  const task = getCronTask(db, id);
  if (!task || !task.enabled) return scheduler.apply(id, task); // changed meanwhile: the store decides
  if (runningRunOf(db, id)) {
    setSchedFrom(db, id, at.toISOString());
    log.info(
      'a cron task fired while its previous run is still going; skipped (runs never overlap)',
      { task: id, scheduled_for: at.toISOString() },
    );
    return;
  }
  try {
    await runs.start(task, trigger, at);
  } catch (err) {
    log.warn('a scheduled cron run could not start', { task: id, error: (err as Error).message });
  }
}

/** A time missed while svc (or this worker) was down runs once if the task wants catch-up; never a burst. */
function catchUp(task: CronTask, now: Date): void {
  const missed = nextFires(task.schedule, task.timezone, new Date(task.sched_from), 1)[0];
  if (!missed || missed.getTime() > now.getTime()) return;
  if (!task.catch_up) {
    setSchedFrom(db!, task.id, now.toISOString());
    return;
  }
  // The latest missed time stands for all of them; the store keeps it from firing twice.
  const at = scheduledTimeOf(task.schedule, task.timezone, now) ?? missed;
  log.info('a cron task missed its time while svc was down; running it once now', {
    task: task.id,
    missed: missed.toISOString(),
    runs_as: at.toISOString(),
  });
  void fire(task.id, at, 'catch_up');
}

endpoint.handle('child.start', (start) => {
  config = start.config;
  db = openDb(paths.db);
  runs = new Runs({ db, paths, endpoint, config: () => config! });
  runs.recover();
  const now = new Date();
  const tasks = listCronTasks(db).filter((t) => t.enabled);
  for (const t of tasks) scheduler.apply(t.id, t);
  for (const t of tasks) catchUp(t, now);
  backups.apply();
  log.info('cron worker started', {
    tasks: tasks.length,
    backups: config.backup.schedule ?? 'off',
  });
  return {};
});
endpoint.onEvent((event) => {
  if (event.type === 'config.changed') {
    config = event.payload.config;
    backups.apply();
  } else if (event.type === 'turn.ended') runs?.turnEnded(event.payload);
  else if (event.type === 'cron.approval') runs?.approval(event.payload);
  else if (event.type === 'usage.warning') runs?.budgetWarning(event.payload);
});
endpoint.handle('cron.reload', ({ id }) => {
  if (db) scheduler.apply(id, getCronTask(db, id));
  return {};
});
endpoint.handle('cron.run', async ({ id }) => {
  if (!db || !runs)
    throw new IpcCallError('unavailable', 'the cron worker is still starting; try again');
  const task = getCronTask(db, id);
  if (!task) throw new IpcCallError('not_found', `There is no task ${id}.`);
  const running = runningRunOf(db, id);
  if (running)
    throw new IpcCallError(
      'conflict',
      `A run of this task is going already (${running.id}, since ${running.started_at}); runs never overlap. Wait for it, or interrupt its session ${running.session_id ?? ''}.`.trim(),
    );
  const r = await runs.start(task, 'manual', null).catch((err: unknown) => {
    // A workflow gone or invalid, a model removed: the client's to fix; the run is recorded as failed.
    const refusal = refusalOf(err);
    if (refusal)
      throw new IpcCallError(
        refusal.code === 'not_found' || refusal.code === 'conflict'
          ? 'invalid_request'
          : refusal.code,
        `The run failed to start: ${refusal.message}`,
      );
    throw err;
  });
  if (!r)
    throw new IpcCallError(
      'conflict',
      'A run of this task started a moment ago; runs never overlap.',
    );
  return r;
});

endpoint.handle('backup.create', async () => {
  try {
    return await backups.run('manual');
  } catch (err) {
    if (err instanceof IpcCallError) throw err;
    throw new IpcCallError('unavailable', `The backup failed: ${(err as Error).message}`);
  }
});

process.on('SIGTERM', () => {
  scheduler.stopAll();
  backups.stop();
  process.exit(0);
});
process.on('SIGINT', () => {});
