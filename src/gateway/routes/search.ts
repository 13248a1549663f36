import { z } from 'zod';
import { turnOrigin } from '../../shared/protocol/ipc.js';
import { searchRequest, type SearchRequest } from '../../shared/search/run.js';
import { SEMANTIC_K, searchRanked } from '../../shared/search/semantic.js';
import { CANDIDATES, searchKinds } from '../../shared/store/search.js';
import { searchAnswer } from '../../shared/protocol/answers/search.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';
import { instant } from '../../shared/instant.js';

const kinds = searchRequest.shape.kinds;

/** The query string's form of a search: the same fields, as text. */
const searchQuery = z.object({
  q: z.string({ error: 'q is required: the words to look for' }),
  session: z.string().optional(),
  origin: z
    .enum(turnOrigin.options, { error: `origin must be one of ${turnOrigin.options.join(', ')}` })
    .optional(),
  role: searchRequest.shape.role,
  kind: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const r = kinds.safeParse(v.split(',').map((k) => k.trim()));
      if (!r.success) {
        ctx.addIssue({ code: 'custom', message: r.error.issues[0]?.message ?? 'bad kind' });
        return z.NEVER;
      }
      return r.data;
    }),
  from: instant('from').optional(),
  to: instant('to').optional(),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'limit must be a whole number from 1 to 50')
    .transform(Number)
    .pipe(searchRequest.shape.limit.unwrap())
    .optional(),
  cursor: z.string().optional(),
});

const SUMMARY = `Finds what was said and written: user and assistant messages, tool calls and their
outputs (the first 4,000 characters), session titles, goals and artifact names, in every chat that
is not in the trash, and memory notes, skill and workflow descriptions. q is what a person types: words (all must appear), "exact phrases", -word or
-"phrase" to exclude, word* for a prefix; anything else (symbols, operators) is read as plain
words. Filters: session (an id), origin (${turnOrigin.options.join(', ')}), role (user, assistant,
tool), kind (comma-separated: ${searchKinds.join(', ')}), from and to (dates or ISO
times, [from, to)). Ranked by relevance (BM25), newest first among equals; when the words match
more than ${CANDIDATES} items, the newest ${CANDIDATES} are ranked (ranked.among_newest and notice say so); limit 1-50 (default 20)
per page, next_cursor for the next. Each item has a bounded snippet with highlights ([start, end)
offsets into it). While an upgraded home's earlier chats are still being indexed, index.state is
"building" and notice says so. Secrets svc scrubs from its logs are not indexed. When
slots.embeddings names a model (an OpenAI-compatible /v1/embeddings endpoint), messages are also
found by meaning (the ${SEMANTIC_K} nearest, at least search.min_similarity alike) and both
rankings are fused by reciprocal rank: ranking says which ordered the items ("text" or
"text+semantic"; score is then BM25 for word matches and 0 for items found by meaning alone).`.replace(
  /\s+/g,
  ' ',
);

/** GET /api/search (and POST, for a query too long for a URL). */
export function searchRoutes(deps: Deps): Route[] {
  const run = async (req: SearchRequest) => ({
    body: await searchRanked(deps.db, req, { config: deps.config(), paths: deps.paths }),
  });
  return [
    route({
      method: 'GET',
      path: '/api/search',
      summary: SUMMARY,
      query: searchQuery,
      response: searchAnswer,
      handler: ({ query: q }) =>
        run({
          q: q.q,
          ...(q.session === undefined ? {} : { session: q.session }),
          ...(q.origin === undefined ? {} : { origin: q.origin }),
          ...(q.role === undefined ? {} : { role: q.role }),
          ...(q.kind === undefined ? {} : { kinds: q.kind }),
          ...(q.from === undefined ? {} : { from: q.from }),
          ...(q.to === undefined ? {} : { to: q.to }),
          ...(q.limit === undefined ? {} : { limit: q.limit }),
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        }),
    }),
    route({
      method: 'POST',
      path: '/api/search',
      summary:
        'The same search as GET /api/search, its fields in a JSON body (kinds as an array): for a query too long for a URL.',
      work: false,
      body: searchRequest,
      response: searchAnswer,
      handler: ({ body }) => run(body),
    }),
  ];
}
