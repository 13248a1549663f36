import { z } from 'zod';

/** The answer of /api/search (GET and POST). zod and node-free. */

export const searchKinds = [
  'message',
  'tool',
  'session',
  'goal',
  'artifact',
  'memory',
  'skill',
  'workflow',
] as const;

export const searchHitSchema = z.lazy(() =>
  z
    .object({
      kind: z.enum(searchKinds),
      /** The message, session, artifact (or, for a goal, session) the hit is. */
      ref: z.string(),
      session_id: z.string().nullable(),
      session_title: z.string().nullable(),
      /** For an artifact, memory note, skill or workflow: its path or name. */
      name: z.string().nullable(),
      /** For message and tool hits: the message's place in its transcript. */
      seq: z.number().int().nullable(),
      role: z.string().nullable(),
      origin: z.string().nullable(),
      created_at: z.string(),
      /** BM25 (lower is better), the order of results before recency breaks ties; 0 for an item found by meaning alone. */
      score: z.number(),
      /** A bounded excerpt around the matched words; `highlights` are [start, end) offsets into it. */
      snippet: z.string(),
      highlights: z.array(z.tuple([z.number().int(), z.number().int()])),
    })
    .meta({ id: 'SearchHit' }),
);

/** Whether the index covers every chat yet (an upgraded home's earlier chats are indexed in the background). */
export const indexStateSchema = z.lazy(() =>
  z.discriminatedUnion('state', [
    z.object({ state: z.literal('ready') }),
    z.object({
      state: z.literal('building'),
      done: z.number().int(),
      total: z.number().int(),
      percent: z.number().int(),
    }),
  ]),
);

export const searchAnswer = z.lazy(() =>
  z.object({
    /** The words looked for, and those excluded. */
    query: z.object({ terms: z.array(z.string()), excluded: z.array(z.string()) }),
    items: z.array(searchHitSchema),
    next_cursor: z.string().nullable(),
    index: indexStateSchema,
    /** Set when the words matched more items than are ranked: only the newest were. */
    ranked: z.object({ among_newest: z.number().int().nullable() }),
    /** Said when the results may be incomplete or ranked by words alone, and why. */
    notice: z.string().optional(),
    /** Which rankings ordered the items: words (BM25) alone, or fused with meaning. */
    ranking: z.enum(['text', 'text+semantic']),
  }),
);
