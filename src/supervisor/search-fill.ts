import { log } from '../shared/log.js';
import type { Db } from '../shared/store/db.js';
import { backfillBatch, indexState } from '../shared/store/search.js';

/** Work at most this long in one go, then let the supervisor's other work run. */
const SLICE_MS = 20;
const PAUSE_MS = 5;
const RETRY_MS = 5_000;

/**
 * Indexes, in the background, what was written before the search index existed (a home from an
 * earlier release): short batches, each its own transaction, so start-up and turns never wait for
 * it. Progress shows in `svc status`; searches meanwhile say the index is still being built.
 */
export function fillSearchIndex(db: Db): { stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const first = indexState(db);
  if (first.state === 'ready') return { stop: () => undefined };
  log.info('indexing earlier chats for search in the background', {
    items: first.total,
  });
  const started = Date.now();
  const tick = () => {
    if (stopped) return;
    const until = performance.now() + SLICE_MS;
    try {
      while (performance.now() < until) {
        if (!backfillBatch(db)) {
          log.info('search index ready', { seconds: Math.round((Date.now() - started) / 1000) });
          return;
        }
      }
    } catch (err) {
      log.warn('indexing earlier chats failed for now; trying again', {
        error: (err as Error).message,
      });
      timer = setTimeout(tick, RETRY_MS);
      return;
    }
    timer = setTimeout(tick, PAUSE_MS);
  };
  timer = setTimeout(tick, 0);
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
