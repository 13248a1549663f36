import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface NofileLimit {
  soft: number;
  hard: number;
}

/** This process's RLIMIT_NOFILE from /proc/self/limits (Linux); undefined elsewhere or when unlimited. */
export function readNofile(pid: number | 'self' = 'self'): NofileLimit | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(
      readFileSync(`/proc/${pid}/limits`, 'utf8'),
    );
    if (!m) return undefined;
    const n = (s: string) => (s === 'unlimited' ? Number.POSITIVE_INFINITY : Number(s));
    return { soft: n(m[1]!), hard: n(m[2]!) };
  } catch {
    return undefined;
  }
}

/**
 * Raises this process's soft descriptor limit to its hard one. Node has no setrlimit, so this
 * runs util-linux's `prlimit` on our own pid; children forked afterwards inherit the raised limit.
 * Answers what happened, as a sentence for the log.
 */
export function raiseNofile(): { limit: NofileLimit | undefined; note: string } {
  const before = readNofile();
  if (!before)
    return {
      limit: undefined,
      note: 'the descriptor limit cannot be read on this system; left as it is',
    };
  if (before.soft >= before.hard)
    return { limit: before, note: `descriptor limit ${before.soft} (already the hard limit)` };
  const hard = Number.isFinite(before.hard) ? String(before.hard) : 'unlimited';
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${hard}:${hard}`], {
      stdio: 'ignore',
      timeout: 5_000,
    });
  } catch (err) {
    const why =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'prlimit (util-linux) is not installed'
        : 'prlimit failed';
    return { limit: before, note: `descriptor limit stays ${before.soft} (hard ${hard}): ${why}` };
  }
  const after = readNofile() ?? before;
  return { limit: after, note: `descriptor limit raised from ${before.soft} to ${after.soft}` };
}

/** Descriptors kept back from connections for the process's own files, pipes, database and logs. */
export const FD_RESERVE = 64;
/** Connection slots that WebSockets may never take, so plain requests (/api/health) still get in. */
export const HTTP_RESERVE = 16;

/**
 * How many connections the gateway takes with `soft` descriptors: `total` open connections of
 * any kind, of which at most `ws` WebSockets. Undefined when the limit is unknown or unlimited.
 */
export function connectionCaps(
  soft: number | undefined,
): { total: number; ws: number } | undefined {
  if (soft === undefined || !Number.isFinite(soft)) return undefined;
  const reserve = Math.min(FD_RESERVE, Math.floor(soft / 2));
  const total = Math.max(1, soft - reserve);
  return { total, ws: Math.max(1, total - Math.min(HTTP_RESERVE, Math.floor(total / 4))) };
}
