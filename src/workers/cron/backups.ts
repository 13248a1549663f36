import type { Cron } from 'croner';
import type { BackupConfig } from '../../shared/config/backup.js';
import { cronOf, machineTimezone } from '../../shared/cron/schedule.js';
import { log } from '../../shared/log.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import type { Db } from '../../shared/store/db.js';

/**
 * Scheduled backups, beside the cron tasks: one croner job for `backup.schedule`, one backup at a
 * time (a fire while one runs is skipped, like a cron task's). The archive code loads at the
 * first backup, not with the worker.
 */
export class BackupSchedule {
  private job: Cron | undefined;
  private schedule: string | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly home: string,
    private readonly db: () => Db | undefined,
    private readonly config: () => BackupConfig | undefined,
  ) {}

  get busy(): number {
    return this.running ? 1 : 0;
  }

  /** Brings the job in line with config.yml. */
  apply(): void {
    const schedule = this.config()?.schedule;
    if (schedule === this.schedule) return;
    this.job?.stop();
    this.job = undefined;
    this.schedule = schedule;
    if (schedule === undefined) return;
    this.job = cronOf(schedule, machineTimezone());
    this.job.schedule(() => {
      this.run('schedule').catch((err: unknown) =>
        log.error('a scheduled backup failed', { error: (err as Error).message }),
      );
    });
    this.job.resume();
  }

  async run(trigger: 'schedule' | 'manual') {
    const db = this.db();
    const cfg = this.config();
    if (!db || !cfg) throw new IpcCallError('unavailable', 'the cron worker is still starting');
    if (this.running)
      throw new IpcCallError('conflict', 'A backup is being made already; wait for it to finish.');
    const { runConfiguredBackup } = await import('../../shared/backup/runner.js');
    const p = runConfiguredBackup(this.home, db, cfg, trigger);
    this.running = p;
    try {
      const made = await p;
      log.info('backup written', { trigger, file: made.file, size: made.size, ms: made.ms });
      return { file: made.file, size: made.size, files: made.files, ms: made.ms };
    } finally {
      this.running = undefined;
    }
  }

  stop(): void {
    this.job?.stop();
  }
}
