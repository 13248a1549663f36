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

export function startBudget(ms = CPU_BUDGET_MS): void {
  cpuDeadline = cpuMs() + ms;
  wallDeadline = performance.now() + Math.max(ms, WALL_BUDGET_MS);
}

export function endBudget(): void {
  cpuDeadline = Infinity;
  wallDeadline = Infinity;
}

/** Whether the budget is spent; cheap enough to call per command, per path and per parse step. */
export function budgetSpent(): boolean {
  return cpuMs() > cpuDeadline || performance.now() > wallDeadline;
}

/** Throws OutOfTime once the budget is spent. */
export function checkBudget(): void {
  if (budgetSpent()) throw new OutOfTime();
}
