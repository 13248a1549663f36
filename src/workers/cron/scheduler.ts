import type { Cron } from 'croner';
import { cronOf, scheduledTimeOf } from '../../shared/cron/schedule.js';
import type { CronTask } from '../../shared/store/cron.js';

interface Job {
  job: Cron;
  schedule: string;
  timezone: string;
}

/**
 * One croner job per enabled task. A fire hands the task id and the scheduled time it belongs
 * to; what a fire does (checks, the run) is the caller's.
 */
export class Scheduler {
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly fire: (taskId: string, scheduledFor: Date) => void) {}

  /** Brings the task's job in line with the store: none when gone or disabled, a new one when the schedule or zone changed. */
  apply(id: string, task: CronTask | undefined): void {
    const cur = this.jobs.get(id);
    if (!task || !task.enabled) {
      cur?.job.stop();
      this.jobs.delete(id);
      return;
    }
    if (cur && cur.schedule === task.schedule && cur.timezone === task.timezone) return;
    cur?.job.stop();
    const job = cronOf(task.schedule, task.timezone);
    job.schedule(() =>
      this.fire(id, scheduledTimeOf(task.schedule, task.timezone, new Date()) ?? new Date()),
    );
    job.resume();
    this.jobs.set(id, { job, schedule: task.schedule, timezone: task.timezone });
  }

  ids(): string[] {
    return [...this.jobs.keys()];
  }

  stopAll(): void {
    for (const j of this.jobs.values()) j.job.stop();
    this.jobs.clear();
  }
}
