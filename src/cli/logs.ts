import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listLogFiles, parseLogText, type LogLine } from '../shared/log-files.js';
import { UsageError } from './argv.js';

/** `svc logs`: the recent lines of every process's log files, merged by time; `-f` follows them. */

export interface LogsOptions {
  processes: string[];
  since: Date | undefined;
  lines: number;
  json: boolean;
}

const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `10m`, `2h`, `30s`, `1d`, or a date/time. */
export function parseSince(text: string, now = Date.now()): Date {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (m?.[1] && m[2]) return new Date(now - Number(m[1]) * (units[m[2]] ?? 0));
  const t = Date.parse(text);
  if (Number.isNaN(t))
    throw new UsageError(
      `--since "${text}" is neither a duration (30s, 10m, 2h, 1d) nor a date and time`,
    );
  return new Date(t);
}

export function formatLine(l: LogLine, json: boolean): string {
  if (json) return JSON.stringify(l);
  if (l.level === null) return `${l.process}| ${l.message}`;
  return `${l.time} ${l.level.padEnd(5)} ${l.process}: ${l.message}`;
}

/** Which processes to read; an unknown name is a usage error that lists the known ones. */
function selected(dir: string, wanted: string[]): Map<string, string[]> {
  const all = listLogFiles(dir);
  if (wanted.length === 0) return all;
  const out = new Map<string, string[]>();
  for (const name of wanted) {
    const files = all.get(name);
    if (!files)
      throw new UsageError(
        `no log for process "${name}" in ${dir}; ${all.size > 0 ? `there are: ${[...all.keys()].join(', ')}` : 'there are none yet'}`,
      );
    out.set(name, files);
  }
  return out;
}

/** The last `lines` lines (after --since) of the chosen processes, oldest first. */
export function recentLines(dir: string, opts: LogsOptions): LogLine[] {
  const since = opts.since?.toISOString();
  const merged: LogLine[] = [];
  for (const [proc, files] of selected(dir, opts.processes)) {
    // newest file first, stopping once this process alone has enough lines
    const chunks: LogLine[][] = [];
    let count = 0;
    for (const file of [...files].reverse()) {
      const lines = parseLogText(readText(file), proc).filter(
        (l) => since === undefined || (l.time !== null && l.time >= since),
      );
      chunks.unshift(lines);
      count += lines.length;
      if (count >= opts.lines) break;
    }
    merged.push(...chunks.flat());
  }
  // stable: lines of one process keep their order when their times tie
  merged.sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
  return merged.slice(-opts.lines);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

interface Tail {
  ino: number;
  offset: number;
  partial: string;
  lastTime: string | null;
}

/** Prints lines as they are appended; a rotation is followed to the new file. Resolves on `signal`. */
export async function follow(
  dir: string,
  opts: LogsOptions,
  print: (l: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  const tails = new Map<string, Tail>();
  const live = (proc: string) => join(dir, `${proc}.log`);
  for (const proc of selected(dir, opts.processes).keys()) {
    const st = statOf(live(proc));
    if (st) tails.set(proc, { ino: st.ino, offset: st.size, partial: '', lastTime: null });
  }
  while (!signal.aborted) {
    const batch: LogLine[] = [];
    const procs = opts.processes.length > 0 ? opts.processes : [...listLogFiles(dir).keys()];
    for (const proc of procs) {
      const st = statOf(live(proc));
      if (!st) continue;
      let t = tails.get(proc);
      if (!t) {
        t = { ino: st.ino, offset: 0, partial: '', lastTime: null };
        tails.set(proc, t);
      }
      if (st.ino !== t.ino) {
        // rotated: finish the old file (now .1) before starting the new one
        const old = statOf(`${live(proc)}.1`);
        if (old && old.ino === t.ino) batch.push(...take(`${live(proc)}.1`, proc, t, old.size));
        Object.assign(t, { ino: st.ino, offset: 0, partial: '' });
      } else if (st.size < t.offset) {
        t.offset = 0;
      }
      batch.push(...take(live(proc), proc, t, st.size));
    }
    batch.sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
    for (const l of batch) print(l);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Reads `[t.offset, size)` of a file and returns its whole lines. */
function take(file: string, proc: string, t: Tail, size: number): LogLine[] {
  if (size <= t.offset) return [];
  const buf = Buffer.alloc(size - t.offset);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const n = readSync(fd, buf, 0, buf.length, t.offset);
    t.offset += n;
    const text = t.partial + buf.subarray(0, n).toString('utf8');
    const cut = text.lastIndexOf('\n');
    t.partial = text.slice(cut + 1);
    const lines = parseLogText(text.slice(0, cut + 1), proc, t.lastTime);
    t.lastTime = lines.at(-1)?.time ?? t.lastTime;
    return lines;
  } finally {
    closeSync(fd);
  }
}

function statOf(file: string): { ino: number; size: number } | undefined {
  try {
    const st = statSync(file);
    return { ino: st.ino, size: st.size };
  } catch {
    return undefined;
  }
}
