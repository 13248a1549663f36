import { readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The log files under $SVC_HOME/logs: `<process>.log` is the live one, `<process>.log.1` the
 * newest rotated one, up to `.log.<keep>`. The supervisor writes them (its own lines and each
 * child's stderr); `svc logs` reads them. audit.log is a record, not a log, and is left out.
 */

export const DEFAULT_LOG_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LOG_FILES_KEPT = 3;

const fileName = /^([a-z][a-z0-9-]*)\.log(?:\.(\d+))?$/;
const notLogs = new Set(['audit']);

/** Shifts `<file>` to `<file>.1`, `.1` to `.2`, …; the oldest beyond `keep` is removed. */
export function rotateLogFile(file: string, keep: number): void {
  rmSync(`${file}.${keep}`, { force: true });
  for (let i = keep - 1; i >= 1; i--) {
    try {
      renameSync(`${file}.${i}`, `${file}.${i + 1}`);
    } catch {
      // a gap in the series is fine
    }
  }
  try {
    renameSync(file, `${file}.1`);
  } catch {
    // nothing to rotate
  }
}

/** Each process's log files, oldest first. */
export function listLogFiles(dir: string): Map<string, string[]> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return new Map();
  }
  const found = new Map<string, { n: number; file: string }[]>();
  for (const name of names) {
    const m = fileName.exec(name);
    if (!m?.[1] || notLogs.has(m[1])) continue;
    const list = found.get(m[1]) ?? [];
    list.push({ n: m[2] === undefined ? 0 : Number(m[2]), file: join(dir, name) });
    found.set(m[1], list);
  }
  const out = new Map<string, string[]>();
  for (const [proc, list] of [...found].sort(([a], [b]) => a.localeCompare(b)))
    out.set(
      proc,
      list.sort((a, b) => b.n - a.n).map((f) => f.file),
    );
  return out;
}

export interface LogLine {
  /** ISO time; a line the logger did not write (a crash trace) takes its predecessor's. */
  time: string | null;
  level: 'debug' | 'info' | 'warn' | 'error' | null;
  process: string;
  message: string;
}

const lineShape =
  /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (debug|info|warn|error)\s+[^\s:]+: (.*)$/;

/** Reads one file's text as lines; `lastTime` carries the time across calls for continuation lines. */
export function parseLogText(
  text: string,
  proc: string,
  lastTime: string | null = null,
): LogLine[] {
  const out: LogLine[] = [];
  let time = lastTime;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const m = lineShape.exec(raw);
    if (m?.[1] && m[2] && m[3] !== undefined) {
      time = m[1];
      out.push({ time, level: m[2] as LogLine['level'], process: proc, message: m[3] });
    } else {
      out.push({ time, level: null, process: proc, message: raw });
    }
  }
  return out;
}
