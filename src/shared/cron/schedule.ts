import { Cron } from 'croner';
import { createRequire } from 'node:module';

// cronstrue (with its locales) loads when a schedule is first put in words, not with every process.
type Cronstrue = { toString: (cron: string, opts: Record<string, unknown>) => string };
let words: Cronstrue | undefined;
const cronstrue = (): Cronstrue =>
  (words ??= createRequire(import.meta.url)('cronstrue') as Cronstrue);

/**
 * Every schedule computation of svc, on croner: validation, the next fire times, the time a fire
 * was scheduled for. A schedule is a 5-field (minutes) or 6-field (seconds first) cron line, or a
 * nickname such as @hourly; `timezone` is an IANA zone.
 */

const OPTIONS = { paused: true, mode: '5-or-6-parts', domAndDow: false } as const;

/** The machine's zone, the default of a task's `timezone`. */
export function machineTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Whether the runtime knows the IANA zone. */
export function isTimezone(tz: string): boolean {
  if (tz.trim() === '' || tz.length > 100) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** What a schedule may be, as the form says it too. */
export const SCHEDULE_FORMS =
  '5 fields (minute hour day month weekday), 6 with seconds first, or a nickname such as @hourly or @daily';

/**
 * The problem with a cron line as one clause without a full stop (callers end the sentence), or
 * undefined when croner accepts it. The field count is said here: croner's own message names
 * "five, six, or seven" parts where svc takes five or six.
 */
export function scheduleProblem(schedule: string): string | undefined {
  const s = schedule.trim();
  if (s === '') return `the schedule is empty; give ${SCHEDULE_FORMS}`;
  try {
    new Cron(s, OPTIONS);
    return undefined;
  } catch (err) {
    const parts = s.split(/\s+/).length;
    if (s.startsWith('@'))
      return `"${s}" is not a nickname; use @yearly, @monthly, @weekly, @daily or @hourly`;
    if (parts !== 5 && parts !== 6)
      return `"${s}" has ${parts} field${parts === 1 ? '' : 's'}; a schedule has ${SCHEDULE_FORMS}`;
    return `"${s}": ${(err as Error).message.replace(/^CronPattern: /, '').replace(/\.+$/, '')}`;
  }
}

/** A paused croner job for computations (throws on a bad schedule; validate first). */
export function cronOf(schedule: string, timezone: string): Cron {
  return new Cron(schedule.trim(), { ...OPTIONS, timezone });
}

/** The next `count` fire times strictly after `from`. */
export function nextFires(schedule: string, timezone: string, from: Date, count = 1): Date[] {
  return cronOf(schedule, timezone).nextRuns(count, from);
}

/** The scheduled time a fire happening now belongs to: the latest one at or before this second. */
export function scheduledTimeOf(schedule: string, timezone: string, now: Date): Date | undefined {
  // previousRuns is strictly before its reference, at whole seconds: the next second includes this one.
  const nextSecond = Math.floor(now.getTime() / 1000) * 1000 + 1000;
  return cronOf(schedule, timezone).previousRuns(1, new Date(nextSecond))[0];
}

/** A time as a wall clock in a zone with its UTC offset, e.g. 2026-03-29T09:00:00+02:00. */
export function wallTime(at: Date, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

/** A schedule in words ("At 09:00, Monday through Friday"), by cronstrue; the line itself if it cannot say. */
export function describeSchedule(schedule: string): string {
  try {
    return cronstrue().toString(schedule.trim(), {
      use24HourTimeFormat: true,
      throwExceptionOnParseError: true,
    });
  } catch {
    return schedule.trim();
  }
}
