import type { Config } from '../shared/config/schema.js';
import { log } from '../shared/log.js';
import {
  EmbeddingBudgetExceeded,
  embeddingsModel,
  embedTexts,
} from '../shared/search/embeddings.js';
import type { Db } from '../shared/store/db.js';
import { insertUsage, type UsageRecordInput } from '../shared/store/usage.js';
import {
  embedMarkFor,
  loadVectors,
  messagesAbove,
  nextToEmbed,
  readEmbedMark,
  storeVectors,
  sweepVectors,
} from '../shared/store/vectors.js';

/** For `svc status`: the embeddings model and the messages it has yet to embed; null without the slot. */
export function embeddingsState(
  db: Db,
  config: Config,
): { model_id: string; waiting: number } | null {
  const model = embeddingsModel(config);
  if (!model) return null;
  const m = readEmbedMark(db);
  const mark = m && m.model === model.key ? m.mark : 0;
  const waiting = (
    db.prepare('SELECT count(*) AS n FROM messages WHERE rowid > ?').get(mark) as { n: number }
  ).n;
  return { model_id: model.id, waiting };
}

/** Messages per call: one request carries this many texts. */
const BATCH = 32;
/** A message's words beyond this are not embedded (about 2,000 tokens, within every model's input). */
const MAX_CHARS = 8000;
const TIMEOUT_MS = 60_000;
const POLL_MS = 1000;
const RETRY_MS = 30_000;
const BUDGET_RETRY_MS = 5 * 60_000;

/**
 * Embeds messages in the background while slots.embeddings names a model: batches above a mark
 * kept in meta (so a restart goes on where it stopped), each batch's vectors, mark and usage
 * record in one transaction. Without the slot it does nothing: no extension loaded, no request.
 * The config is read at every step, so setting or clearing the slot takes effect within a second.
 */
export function fillEmbeddings(db: Db, config: () => Config): { stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let swept = false;
  let lastError = '';
  const later = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };
  const tick = async (): Promise<void> => {
    const c = config();
    const model = embeddingsModel(c);
    if (!model) return later(POLL_MS);
    try {
      loadVectors(db);
      const mark = embedMarkFor(db, model.key);
      if (!swept) {
        sweepVectors(db);
        swept = true;
      }
      if (!messagesAbove(db, mark.mark)) return later(POLL_MS);
      const { items, upto } = nextToEmbed(db, mark.mark, BATCH, MAX_CHARS);
      if (upto === null) return later(POLL_MS);
      let usage: UsageRecordInput | undefined;
      const vectors =
        items.length === 0
          ? []
          : await embedTexts(
              db,
              c,
              model,
              items.map((i) => i.text),
              { timeoutMs: TIMEOUT_MS, record: (r) => (usage = r) },
            );
      if (stopped) return;
      db.transaction(() => {
        storeVectors(
          db,
          model.key,
          items.map((i, n) => ({ rowid: i.rowid, vector: vectors[n]! })),
          upto,
        );
        if (usage) insertUsage(db, usage);
      }).immediate();
      lastError = '';
      return later(0);
    } catch (err) {
      const message = (err as Error).message;
      // Said once per different reason, not every retry.
      if (message !== lastError)
        log.warn('messages could not be embedded for semantic search; trying again later', {
          error: message,
        });
      lastError = message;
      return later(err instanceof EmbeddingBudgetExceeded ? BUDGET_RETRY_MS : RETRY_MS);
    }
  };
  later(0);
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
