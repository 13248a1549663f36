import { z } from 'zod';
import { refusalOf } from '../../../../shared/errors.js';
import { searchAll, type SearchRequest } from '../../../../shared/search/run.js';
import { searchRanked } from '../../../../shared/search/semantic.js';
import { searchKinds, type SearchHit } from '../../../../shared/store/search.js';
import { defineTool } from '../registry.js';

const MAX_RESULTS = 10;

/** A hit as one cited line: where and when it was said, then the excerpt with the matches in **bold**. */
function cite(h: SearchHit): string {
  let text = '';
  let at = 0;
  for (const [a, b] of h.highlights) {
    text += `${h.snippet.slice(at, a)}**${h.snippet.slice(a, b)}**`;
    at = b;
  }
  text += h.snippet.slice(at);
  const where = h.session_id
    ? [
        `session ${h.session_id}`,
        h.session_title ? `"${h.session_title.slice(0, 80)}"` : '',
        h.created_at.slice(0, 10),
        h.kind === 'message' || h.kind === 'tool' ? `message ${h.ref} (${h.role})` : h.kind,
      ].filter(Boolean)
    : [`${h.kind} ${h.name ?? ''}`.trim()];
  return `[${where.join(', ')}] ${text.replace(/\s+/g, ' ')}`;
}

/**
 * search_history: the one way a turn sees other sessions' content. It reads the same index and
 * the same query syntax as GET /api/search, and answers short cited excerpts, never whole chats.
 */
export const searchHistoryTool = defineTool({
  name: 'search_history',
  purpose: 'Searches your earlier chats for something said there.',
  description:
    'Searches every earlier conversation with the user (all sessions not in the trash): their messages, your replies, tool calls and outputs, session titles, goals and file names; also memory notes, skills and workflows. Query syntax: words (all must appear), "exact phrase", -word to exclude, word* for a prefix. Answers up to 10 short excerpts, each cited with its session id and title, date and message id; the current session is left out unless include_current is true.',
  args: z
    .object({
      query: z
        .string()
        .min(1)
        .max(500)
        .describe('Distinctive words the conversation would contain'),
      kind: z.array(z.enum(searchKinds)).min(1).optional().describe('Only these kinds of item'),
      from: z.string().optional().describe('Only items from this date on (YYYY-MM-DD)'),
      to: z.string().optional().describe('Only items before this date (YYYY-MM-DD)'),
      include_current: z.boolean().optional(),
    })
    .strict(),
  run: async (args, ctx) => {
    let answer: Pick<ReturnType<typeof searchAll>, 'items' | 'notice'>;
    const req: SearchRequest = {
      q: args.query,
      limit: MAX_RESULTS,
      ...(args.kind ? { kinds: args.kind } : {}),
      ...(args.from ? { from: args.from } : {}),
      ...(args.to ? { to: args.to } : {}),
    };
    const opts = {
      paths: ctx.paths,
      ...(args.include_current === true ? {} : { excludeSession: ctx.sessionId }),
    };
    try {
      // With the embeddings slot, by meaning too (as GET /api/search); without, by words alone.
      answer = ctx.config
        ? await searchRanked(ctx.db, req, { ...opts, config: ctx.config() })
        : searchAll(ctx.db, req, opts);
    } catch (err) {
      if (refusalOf(err)) return { output: (err as Error).message, isError: true };
      throw err;
    }
    const hits = answer.items;
    const lines = hits.map(cite);
    if (answer.notice) lines.push(`(${answer.notice})`);
    if (hits.length === 0)
      return {
        output: `Nothing found for ${JSON.stringify(args.query)} in earlier conversations. Try other or fewer words, or a prefix (word*).${answer.notice ? ` ${answer.notice}` : ''}`,
      };
    return { output: lines.join('\n') };
  },
});
