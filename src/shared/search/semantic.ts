import type { Config } from '../config/schema.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import { messageHits, type SearchHit } from '../store/search.js';
import { encodeCursor } from '../store/util.js';
import { loadVectors, nearestMessages } from '../store/vectors.js';
import { EmbeddingBudgetExceeded, embeddingsModel, embedTexts } from './embeddings.js';
import { MAX_OFFSET, searchAll, type SearchAnswer, type SearchRequest } from './run.js';
import { parseSearchQuery } from './query.js';
import { queryTerms } from './snippet.js';
import type { Paths } from '../paths.js';

/** The nearest messages by meaning taken into a search's ranking. */
export const SEMANTIC_K = 50;
/** Reciprocal rank fusion's constant: a result's score is the sum of 1 / (RRF_K + rank) over both lists. */
const RRF_K = 60;
/** A query's embedding waits at most this long; past it the search answers by words alone. */
const QUERY_TIMEOUT_MS = 5000;

export type Ranking = 'text' | 'text+semantic';

export interface RankedAnswer extends SearchAnswer {
  /** Which rankings ordered the items: words (BM25) alone, or fused with meaning (RRF). */
  ranking: Ranking;
}

/**
 * A search as the API answers it: by words, and, when slots.embeddings names a model, also by
 * meaning (the query's vector against the messages' vectors), the two lists fused by reciprocal
 * rank. Paging stays stable: the text window always reaches past SEMANTIC_K, so a text hit below
 * it can never overtake a semantic one on an earlier page. Without the slot, nothing is loaded
 * and nothing is sent; when the embeddings endpoint fails or a budget refuses, the answer is the
 * text ranking and its notice says why.
 */
export async function searchRanked(
  db: Db,
  raw: SearchRequest,
  opts: { config: Config; paths?: Paths; excludeSession?: string },
): Promise<RankedAnswer> {
  const base = {
    ...(opts.paths === undefined ? {} : { paths: opts.paths }),
    ...(opts.excludeSession === undefined ? {} : { excludeSession: opts.excludeSession }),
  };
  const model = embeddingsModel(opts.config);
  if (!model) {
    const { page: _, ...answer } = searchAll(db, raw, base);
    return { ...answer, ranking: 'text' };
  }
  // Words first (a bad request is the same 400 with or without the semantic side, and is refused
  // before anything is sent), over a window reaching past SEMANTIC_K.
  const { page, ...words } = searchAll(db, raw, {
    ...base,
    window: (p) => Math.max(p.offset + p.limit + 1, SEMANTIC_K + 1),
  });
  const { offset, limit } = page;
  const pageOf = (items: SearchHit[]) => {
    const more = items.length > offset + limit && offset + limit < MAX_OFFSET;
    return {
      items: items.slice(offset, offset + limit),
      next_cursor: more ? encodeCursor({ o: offset + limit }) : null,
    };
  };
  let nearest: Array<{ id: string; similarity: number }>;
  try {
    loadVectors(db);
    const [vector] = await embedTexts(db, opts.config, model, [raw.q.slice(0, 2000)], {
      timeoutMs: QUERY_TIMEOUT_MS,
    });
    nearest = nearestMessages(db, model.key, vector!, SEMANTIC_K).filter(
      (n) => n.similarity >= opts.config.search.min_similarity,
    );
  } catch (err) {
    const why =
      err instanceof EmbeddingBudgetExceeded
        ? err.message.replace(/\.$/, '')
        : 'the embeddings model could not be reached';
    if (!(err instanceof EmbeddingBudgetExceeded))
      log.warn('search by meaning failed; answering by words alone', {
        error: (err as Error).message,
      });
    const notice = `Ranked by words only: ${why}.`;
    return {
      ...words,
      ...pageOf(words.items),
      ranking: 'text',
      notice: words.notice ? `${words.notice} ${notice}` : notice,
    };
  }
  const parsed = parseSearchQuery(raw.q);
  const terms = parsed.ok ? queryTerms(parsed.query.wanted) : [];
  const semantic = messageHits(
    db,
    nearest.map((n) => n.id),
    terms,
    {
      ...(raw.session === undefined ? {} : { session_id: raw.session }),
      ...(raw.origin === undefined ? {} : { origin: raw.origin }),
      ...(raw.role === undefined ? {} : { role: raw.role }),
      ...(raw.kinds === undefined ? {} : { kinds: raw.kinds }),
      ...(raw.from === undefined ? {} : { from: raw.from }),
      ...(raw.to === undefined ? {} : { to: raw.to }),
      ...(opts.excludeSession === undefined ? {} : { exclude_session_id: opts.excludeSession }),
    },
  );
  return { ...words, ...pageOf(fuse(words.items, semantic)), ranking: 'text+semantic' };
}

/** Reciprocal rank fusion of two best-first lists; each item once, its score the fused one (higher is better, as 1 / rank). */
export function fuse(text: SearchHit[], semantic: SearchHit[]): SearchHit[] {
  const byKey = new Map<string, { hit: SearchHit; score: number; first: number }>();
  const add = (list: SearchHit[], offset: number) =>
    list.forEach((hit, rank) => {
      const key = `${hit.kind}:${hit.ref}`;
      const s = 1 / (RRF_K + rank + 1);
      const have = byKey.get(key);
      if (have) have.score += s;
      else byKey.set(key, { hit, score: s, first: offset + rank });
    });
  add(text, 0);
  add(semantic, text.length);
  return [...byKey.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map((e) => e.hit);
}
