import { realpathSync } from 'node:fs';
import { posix } from 'node:path';

/** Paths resolved through the file system per check at most; past that, paths are judged as named. */
const BUDGET = 512;
let calls = 0;
let exceeded = false;

/** Starts a check's budget of file system look-ups. */
export function resetRealBudget(): void {
  calls = 0;
  exceeded = false;
}

/** Whether this check named more paths than it could resolve (then it asks). */
export function realBudgetExceeded(): boolean {
  return exceeded;
}

/**
 * Where a path really leads: symbolic links in its longest existing prefix resolved, the rest
 * kept as written (`link/*` with link -> /elsewhere is `/elsewhere/*`). Iterative, so a long
 * path cannot overflow the stack.
 */
export function realish(p: string): string {
  if (++calls > BUDGET) {
    exceeded = true;
    return p;
  }
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = realpathSync(cur);
      return rest.length === 0 ? real : posix.join(real, ...rest.reverse());
    } catch {
      const parent = posix.dirname(cur);
      if (parent === cur || rest.length > 64) return p;
      rest.push(posix.basename(cur));
      cur = parent;
    }
  }
}
