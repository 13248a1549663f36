import { accessSync, constants, statfsSync } from 'node:fs';
import type { Paths } from '../shared/paths.js';
import { isDiskFull } from '../shared/disk-full.js';

/**
 * Exit codes of `svc serve` for faults of the state folder at start (sysexits.h numbers, so
 * scripts and service managers can tell them apart); anything else exits 1.
 */
export const startExit = { damaged: 65, readOnly: 73, diskFull: 74 } as const;

/**
 * A start-up failure of the store or the state folder in words a person can act on (which file,
 * what happened, what helps), or undefined for any other failure. SQLite's own words ("disk I/O
 * error", "unable to open database file", "file is not a database") are kept at the end.
 */
export function describeStartFault(
  err: unknown,
  paths: Paths,
): { message: string; exitCode: number } | undefined {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  const raw = (err as Error)?.message ?? String(err);
  const file = (err as { path?: unknown } | null)?.path;
  const where = typeof file === 'string' ? file : paths.db;
  if (isDiskFull(err) || (code.startsWith('SQLITE_IOERR') && freeBytes(paths.home) === 0)) {
    return {
      exitCode: startExit.diskFull,
      message: `the disk holding ${paths.home} is full, so svc cannot write ${where}. Free some space there (see "df -h ${paths.home}") and start svc again. (${raw})`,
    };
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT')) {
    return {
      exitCode: startExit.damaged,
      message: `${paths.db} is damaged (${raw}); svc left it untouched. Move it aside to start with an empty store ("mv ${paths.db} ${paths.db}.damaged"), or put back a copy you saved (stop svc, copy svc.db with its -wal file); "sqlite3 ${paths.db} .recover" can often save most of its data.`,
    };
  }
  if (
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_READONLY' ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'EACCES' ||
    code === 'EROFS' ||
    code === 'EPERM'
  ) {
    const target = code.startsWith('SQLITE_') ? paths.db : where;
    return {
      exitCode: startExit.readOnly,
      message: `svc cannot write ${target}: ${writable(paths.home) ? 'the file or its folder refuses writes' : `the folder ${paths.home} is read-only or not writable by this user`}. Make it writable (check "ls -ld ${paths.home}", the mount's ro flag, or "chown -R $(id -u) ${paths.home}"), or run svc with SVC_HOME set to a folder it can write. (${raw})`,
    };
  }
  return undefined;
}

function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
