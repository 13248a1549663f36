/**
 * Gives memory back once a child goes quiet (issue 37): one full GC when no work has arrived over
 * IPC for QUIET_MS and nothing is under way, once per burst of work. The garbage a start or a
 * burst of turns leaves in V8's old space otherwise stays resident until allocation resumes,
 * which for an idle worker is never. The supervisor's liveness pings and stats requests are not
 * work. Needs `--expose-gc` (the role's V8 flags); without it this does nothing.
 */
const QUIET_MS = 3000;
const NOT_WORK = new Set(['child.ping', 'child.stats']);

export function collectWhenIdle(busy: () => boolean): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return;
  let last = Date.now();
  let dirty = true;
  process.on('message', (m: unknown) => {
    const type = (m as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && NOT_WORK.has(type)) return;
    last = Date.now();
    dirty = true;
  });
  setInterval(() => {
    if (!dirty || Date.now() - last < QUIET_MS || busy()) return;
    dirty = false;
    gc();
  }, 1000).unref();
}
