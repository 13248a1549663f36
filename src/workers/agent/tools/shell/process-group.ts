import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Every command runs as the leader of its own process group, so "stop it" means the whole group:
 * the shell, what it started, and what those started. The groups still running are killed when
 * this worker exits, so no command outlives svc.
 */
const live = new Set<number>();
let hooked = false;
let changed: ((pgids: number[]) => void) | undefined;

/**
 * Tells `listener` the groups still running each time one starts or ends, so that someone outside
 * this process (the supervisor) can stop them if this process dies without running its exit hook
 * (kill -9, the out-of-memory killer).
 */
export function onGroupsChange(listener: (pgids: number[]) => void): void {
  changed = listener;
}

export function trackGroup(pgid: number): void {
  live.add(pgid);
  changed?.([...live]);
  if (hooked) return;
  hooked = true;
  // 'exit' handlers must be synchronous: SIGKILL now, there is no later.
  process.on('exit', () => {
    for (const g of live) signalGroup(g, 'SIGKILL');
  });
}

export function untrackGroup(pgid: number): void {
  if (live.delete(pgid)) changed?.([...live]);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether any process of the group is still alive. On Linux this reads /proc and ignores zombies
 * (an orphan nobody reaped yet must not count as running); elsewhere it asks kill(0).
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform !== 'linux') return signalGroup(pgid, 0);
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return signalGroup(pgid, 0);
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** SIGTERM to the group, then SIGKILL to whatever is left after `graceMs`. */
export async function terminateGroup(pgid: number, graceMs = 2000): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    await sleep(50);
    if (!groupAlive(pgid)) return;
  }
  signalGroup(pgid, 'SIGKILL');
}
