/** The reason a turn that could not be saved for want of space ends with, as clients see it. */
export const DISK_FULL_REASON = 'disk_full';

/** Whether an error from SQLite or the file system means the disk (or the user's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

/** What a person reads when svc could not save something: what happened and what helps. */
export function diskFullMessage(home: string): string {
  return `The disk is full: svc could not save to ${home}. Free some space there (see "df -h ${home}") and try again; nothing needs restarting.`;
}
