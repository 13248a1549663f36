import { log } from '../shared/log.js';
import type { Db } from '../shared/store/db.js';
import {
  backfillBatch,
  indexNewMessages,
  indexState,
  newMessagesWaiting,
} from '../shared/store/search.js';

/** Work at most this long in one go, then let the supervisor's other work run. */
const SLICE_MS = 20;
const PAUSE_MS = 5;
/** How often new messages are looked for when there is nothing else to do. */
const POLL_MS = 1000;
const RETRY_MS = 5_000;

/**
 * Keeps the search index filled in the background, in short batches (each its own transaction)
 * so start-up and turns never wait for it: first what was written before the index existed (a
 * home from an earlier release; progress in `svc status`), then, within a second, the messages
 * turns wrote (a search indexes those itself first, so this only keeps that step short).
 */
export function fillSearchIndex(db: Db): { stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const first = indexState(db);
  let backfilling = first.state === 'building';
  if (first.state === 'building')
    log.info('indexing earlier chats for search in the background', { items: first.total });
  const started = Date.now();
  const tick = () => {
    if (stopped) return;
    const until = performance.now() + SLICE_MS;
    let more = false;
    try {
      while (performance.now() < until) {
        if (backfilling) {
          if (backfillBatch(db)) {
            more = true;
            continue;
          }
          backfilling = false;
          log.info('search index ready', { seconds: Math.round((Date.now() - started) / 1000) });
        }
        more = newMessagesWaiting(db) && indexNewMessages(db) > 0;
        if (!more) break;
      }
    } catch (err) {
      log.warn('the search index could not be filled for now; trying again', {
        error: (err as Error).message,
      });
      timer = setTimeout(tick, RETRY_MS);
      timer.unref();
      return;
    }
    timer = setTimeout(tick, more ? PAUSE_MS : POLL_MS);
    timer.unref();
  };
  timer = setTimeout(tick, 0);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
