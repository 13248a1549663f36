/**
 * The stall watchdog: passes chunks through, and fails when the next one takes longer than `ms`.
 * Only time spent waiting on the source counts, not time the consumer spends on a chunk. On a
 * stall the source is torn down (`destroy`) so its socket is released.
 */
export async function* watchStall<T>(
  source: AsyncIterable<T>,
  ms: number,
  onStall: () => Error,
  destroy: () => void,
): AsyncGenerator<T> {
  if (!(ms > 0)) return yield* source;
  const it = source[Symbol.asyncIterator]();
  let stalled = false;
  try {
    for (;;) {
      const next = it.next();
      // The losing promise of the race below may still settle later; never let it go unhandled.
      next.catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          stalled = true;
          reject(onStall());
        }, ms);
      });
      let r: IteratorResult<T>;
      try {
        r = await Promise.race([next, timeout]);
      } finally {
        clearTimeout(timer);
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    if (stalled) destroy();
    else await it.return?.();
  }
}
