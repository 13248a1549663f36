/**
 * One check's time budget. An ordinary line takes well under a millisecond; past the budget the
 * check stops and the call always asks, so no input can hold the engine up.
 *
 * Counted in CPU time of this process, not wall clock: on a loaded machine (a build beside it,
 * a CI runner) wall time stretches for every line alike, and a plain `echo` must not turn into
 * "too complex to judge" there. A generous wall-clock bound stays behind it for a process that
 * is starved outright.
 */
export class OutOfTime extends Error {
  constructor() {
    super('the check ran out of time');
  }
}

/** The worst inputs found take tens of ms of CPU. */
const CPU_BUDGET_MS = 1000;
const WALL_BUDGET_MS = 30_000;
let cpuDeadline = Infinity;
let wallDeadline = Infinity;

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Bounds on the work one line can make the check do, whatever its CPU time: past one, the check
 * stops following that part, notes it, and the line always asks (the engine fails closed).
 * `cd a || cd b` fourteen times would otherwise follow 16 384 folders, and a variable doubled 22
 * times would hold 4 MB.
 */
export const LIMITS = {
  /** Folders a command may be running in after `cd`s that may fail. */
  cwds: 8,
  /** Characters of a variable's value followed through the line. */
  value: 4096,
  /** Words one brace or word splitting makes. */
  fields: 64,
  /** Commands found inside other commands' arguments (runners, inline code, decoded text). */
  inner: 64,
} as const;

let capped: string | null = null;

/** Records that the check stopped following something (the first reason is kept). */
export function noteCap(what: string): void {
  capped ??= what;
}

/** What the check stopped following in this line, or null. */
export function capNoted(): string | null {
  return capped;
}

export function startBudget(ms = CPU_BUDGET_MS): void {
  capped = null;
  lastCpuRead = -Infinity;
  cpuDeadline = cpuMs() + ms;
  wallDeadline = performance.now() + Math.max(ms, WALL_BUDGET_MS);
}

export function endBudget(): void {
  cpuDeadline = Infinity;
  wallDeadline = Infinity;
}

/** When CPU time was last read: reading it is a system call, so it is read at most every 10 ms. */
let lastCpuRead = -Infinity;

/** Whether the budget is spent; cheap enough to call per command, per path and per parse step. */
export function budgetSpent(): boolean {
  const now = performance.now();
  if (now > wallDeadline) return true;
  if (now - lastCpuRead < 10) return false;
  lastCpuRead = now;
  return cpuMs() > cpuDeadline;
}

/** Throws OutOfTime once the budget is spent. */
export function checkBudget(): void {
  if (budgetSpent()) throw new OutOfTime();
}
