import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../atomic-write.js';
import type { Paths } from '../paths.js';

/*
 * How svc starts again after an upgrade: the supervisor records the command that started it
 * (its launcher, bin/svc.js, which follows versions/current; the address it is bound to), stops,
 * and runs that command. `svc upgrade` reads the record to start the previous version when the
 * new one does not come up (the automatic rollback).
 */

export const relaunchSchema = z.object({
  exec: z.string(),
  args: z.array(z.string()),
  /** Detached with its output in logs/serve.log (`svc serve -d`), else on the stdout it had. */
  daemonized: z.boolean(),
  /** The process started from this record, once started. */
  pid: z.number().int().optional(),
  /** What it had listened on, for the health check. */
  url: z.string().nullable(),
});
export type Relaunch = z.infer<typeof relaunchSchema>;

export const relaunchFile = (paths: Paths): string => join(paths.runDir, 'relaunch.json');

export function readRelaunch(paths: Paths): Relaunch | undefined {
  try {
    return relaunchSchema.parse(JSON.parse(readFileSync(relaunchFile(paths), 'utf8')));
  } catch {
    return undefined;
  }
}

export function writeRelaunch(paths: Paths, r: Relaunch): void {
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  writeFileAtomic(relaunchFile(paths), JSON.stringify(r) + '\n', 0o600);
}

/** `serve` arguments to start again on the address bound now (a `:0` port stays the same one). */
export function serveArgs(argv: string[], boundAddr: string | null): string[] {
  const rest = argv.slice(argv.indexOf('serve') + 1);
  const out: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '-d' || a === '--daemon' || a === '-daemon') continue;
    if (boundAddr !== null && (a === '--addr' || a === '-addr')) {
      i++;
      continue;
    }
    if (boundAddr !== null && (a.startsWith('--addr=') || a.startsWith('-addr='))) continue;
    out.push(a);
  }
  return boundAddr === null ? out : [...out, '--addr', boundAddr];
}

/** Set for a process started from a record: it may wait for its port (supervisor/port-check.ts). */
export const RELAUNCH_ENV = 'SVC_RELAUNCH';

/** Starts svc from a record, detached so it outlives whoever starts it. */
export function startFromRecord(paths: Paths, r: Relaunch, forceDaemon = false): number {
  const daemon = r.daemonized || forceDaemon;
  let out: number | 'inherit' = 'inherit';
  if (daemon) {
    mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
    out = openSync(paths.serveLog, 'a', 0o600);
  }
  const child = spawn(r.exec, r.args, {
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      SVC_HOME: paths.home,
      [RELAUNCH_ENV]: '1',
      ...(daemon ? { SVC_DAEMONIZED: '1' } : {}),
    },
  });
  if (typeof out === 'number') closeSync(out);
  child.on('error', () => {});
  child.unref();
  return child.pid ?? -1;
}
