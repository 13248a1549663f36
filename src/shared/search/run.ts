import { z } from 'zod';
import { ApiError, invalidInput } from '../errors.js';
import { instant } from '../instant.js';
import { turnOrigin } from '../protocol/ipc.js';
import type { Db } from '../store/db.js';
import {
  CANDIDATES,
  indexNewMessages,
  indexState,
  newMessagesWaiting,
  searchIndex,
  searchKinds,
  type IndexState,
  type SearchHit,
} from '../store/search.js';
import { decodeCursor, encodeCursor } from '../store/util.js';
import { syncFileDocs } from './files.js';
import { parseSearchQuery } from './query.js';
import { queryTerms } from './snippet.js';
import type { Paths } from '../paths.js';

/** Pages past this many results are refused: a narrower query finds it sooner. */
export const MAX_OFFSET = 1000;
export const DEFAULT_LIMIT = 20;

/** One search, as the API (GET's query or POST's body) and the agent's tool ask for it. */
export const searchRequest = z.object({
  q: z.string({ error: 'q is required: the words to look for' }),
  session: z.string().max(200).optional(),
  origin: z
    .enum(turnOrigin.options, { error: `origin must be one of ${turnOrigin.options.join(', ')}` })
    .optional(),
  role: z
    .enum(['user', 'assistant', 'tool'], { error: 'role must be one of user, assistant, tool' })
    .optional(),
  kinds: z
    .array(z.enum(searchKinds, { error: `kind must be among ${searchKinds.join(', ')}` }))
    .min(1, `kind must name at least one of ${searchKinds.join(', ')}`)
    .optional(),
  from: instant('from').optional(),
  to: instant('to').optional(),
  limit: z
    .number()
    .int()
    .min(1, 'limit must be a whole number from 1 to 50')
    .max(50, 'limit must be a whole number from 1 to 50')
    .optional(),
  cursor: z.string().optional(),
});
export type SearchRequest = z.input<typeof searchRequest>;

export interface SearchAnswer {
  query: { terms: string[]; excluded: string[] };
  items: SearchHit[];
  next_cursor: string | null;
  index: IndexState;
  /** Set when the words matched more than CANDIDATES items: only the newest were ranked. */
  ranked: { among_newest: number | null };
  /** Said when the results may be incomplete (the index is still being built). */
  notice?: string;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('invalid_request', message, [{ path: field, message }]);
}

/** At most this many new messages are indexed before a search (a burst larger than that is rare: the supervisor keeps up). */
const CATCH_UP = 5000;

/** Indexes messages written since the index last looked; true when some still wait (more than CATCH_UP). */
function catchUp(db: Db): boolean {
  try {
    // A read first: most searches find nothing new, and need no write lock.
    if (!newMessagesWaiting(db)) return false;
    let done = 0;
    while (done < CATCH_UP) {
      const n = indexNewMessages(db);
      if (n === 0) return false;
      done += n;
    }
    return newMessagesWaiting(db);
  } catch {
    // Busy past the timeout (or a read-only store): search what is in, and say the rest waits.
    return true;
  }
}

/** Runs one search; a question it cannot answer is a 400 that says what to change, never a 500. */
export function searchAll(
  db: Db,
  raw: SearchRequest,
  opts: {
    /** The agent's tool leaves out the session it runs in. */
    excludeSession?: string;
    /** Where memory notes, skills and workflows are: given, the index catches up with them first. */
    paths?: Paths;
    /**
     * For fusion with the semantic side: the best `window` text hits from the first (all of them,
     * unpaged); the answer's `page` says which slice the request asked for.
     */
    window?: (page: { offset: number; limit: number }) => number;
  } = {},
): SearchAnswer & { page: { offset: number; limit: number } } {
  const parsedReq = searchRequest.safeParse(raw);
  if (!parsedReq.success) throw invalidInput(parsedReq.error, { what: 'search' });
  const req = parsedReq.data;
  const parsed = parseSearchQuery(req.q);
  if (!parsed.ok) throw invalid('q', parsed.message);
  if (req.from !== undefined && req.to !== undefined && req.from >= req.to)
    throw invalid('from', 'from must be earlier than to.');
  let offset = 0;
  if (req.cursor !== undefined) {
    const c = decodeCursor(req.cursor);
    const o = z.object({ o: z.number().int().min(0).max(MAX_OFFSET) }).safeParse(c);
    if (!o.success)
      throw invalid(
        'cursor',
        'cursor is not one this search gave out; start again without it (or narrow the query: pages end after 1,000 results).',
      );
    offset = o.data.o;
  }
  const limit = req.limit ?? DEFAULT_LIMIT;
  // Messages committed since the last fill go in first, so a search never misses one.
  const waiting = catchUp(db);
  if (opts.paths) {
    try {
      syncFileDocs(db, opts.paths);
    } catch {
      // A busy store or an unreadable folder: search what is in.
    }
  }
  let hits: SearchHit[];
  let capped = false;
  try {
    ({ hits, capped } = searchIndex(
      db,
      parsed.query.fts,
      queryTerms(parsed.query.wanted),
      {
        ...(req.session === undefined ? {} : { session_id: req.session }),
        ...(req.origin === undefined ? {} : { origin: req.origin }),
        ...(req.role === undefined ? {} : { role: req.role }),
        ...(req.kinds === undefined ? {} : { kinds: req.kinds }),
        ...(req.from === undefined ? {} : { from: req.from }),
        ...(req.to === undefined ? {} : { to: req.to }),
        ...(opts.excludeSession === undefined ? {} : { exclude_session_id: opts.excludeSession }),
      },
      opts.window === undefined
        ? { limit: limit + 1, offset }
        : { limit: opts.window({ offset, limit }), offset: 0 },
    ));
  } catch (err) {
    // The parser quotes every term, so FTS5 should never refuse one; if it does, the person can
    // still act on the answer.
    if (err instanceof Error && /fts5|syntax error|no such column/i.test(err.message))
      throw invalid('q', 'q could not be read as a search; try plain words.');
    throw err;
  }
  const more = hits.length > limit && offset + limit < MAX_OFFSET;
  const index = indexState(db);
  const notices: string[] = [];
  if (index.state === 'building')
    notices.push(
      `The search index is still being built: ${index.percent}% of the chats from before it existed are in (${index.done} of ${index.total}), so older results may be missing.`,
    );
  if (waiting)
    notices.push('The newest messages are still being indexed; search again in a moment.');
  if (capped)
    notices.push(
      `These words match very many items: the newest ${CANDIDATES} matches were ranked; add a word or a filter to reach older ones.`,
    );
  return {
    query: { terms: parsed.query.terms, excluded: parsed.query.excluded },
    items: opts.window === undefined ? hits.slice(0, limit) : hits,
    next_cursor: more ? encodeCursor({ o: offset + limit }) : null,
    page: { offset, limit },
    index,
    ranked: { among_newest: capped ? CANDIDATES : null },
    ...(notices.length > 0 ? { notice: notices.join(' ') } : {}),
  };
}
