import { realpathSync } from 'node:fs';
import { posix } from 'node:path';

/** Paths resolved through the file system per check at most; past that, paths are judged as named. */
const BUDGET = 512;
let calls = 0;
let exceeded = false;

/** Links the line itself makes before it uses them (`ln -s ~/.ssh x; cat x/id_rsa`): link → target. */
const pending = new Map<string, string>();
const MAX_PENDING = 64;

/** Starts a check's budget of file system look-ups. */
export function resetRealBudget(): void {
  calls = 0;
  exceeded = false;
  pending.clear();
  known.clear();
}

/** Paths already resolved in this check (the rules and the hard limits ask about the same ones). */
const known = new Map<string, string>();

/** Records a link the line makes, so later paths through it are judged by where it leads. */
export function noteLink(link: string, target: string): boolean {
  if (pending.size >= MAX_PENDING) return false;
  pending.set(link, target);
  return true;
}

/** A path through a link the line makes, rewritten to its target (a few hops at most). */
function throughPending(p: string): string {
  for (let hops = 0; hops < 8 && pending.size > 0; hops++) {
    let next: string | null = null;
    for (const [link, target] of pending)
      if (p === link || p.startsWith(`${link}/`)) {
        next = target + p.slice(link.length);
        break;
      }
    if (next === null) break;
    p = posix.normalize(next);
  }
  return p;
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
export function realish(named: string): string {
  const p = throughPending(named);
  const hit = known.get(p);
  if (hit !== undefined) return hit;
  const real = resolveReal(p);
  known.set(p, real);
  return real;
}

function resolveReal(p: string): string {
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
