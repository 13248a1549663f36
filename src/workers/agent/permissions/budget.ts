/**
 * One check's time budget (wall clock, generous: an ordinary line takes well under a millisecond).
 * Past it, the check stops and the call always asks: no input can hold the engine up.
 */
export class OutOfTime extends Error {
  constructor() {
    super('the check ran out of time');
  }
}

/** Wall clock, so it also covers a machine too busy to run us; the worst inputs take tens of ms of CPU. */
const BUDGET_MS = 1000;
let deadline = Infinity;

export function startBudget(ms = BUDGET_MS): void {
  deadline = performance.now() + ms;
}

export function endBudget(): void {
  deadline = Infinity;
}

/** Milliseconds left, for a parse that cancels itself. */
export function remainingMs(): number {
  return deadline - performance.now();
}

/** Throws OutOfTime once the budget is spent; cheap enough to call per command and per path. */
export function checkBudget(): void {
  if (performance.now() > deadline) throw new OutOfTime();
}
