import { log } from '../../shared/log.js';
import type { Db } from '../../shared/store/db.js';
import {
  getSession,
  sessionDefaults,
  titleIfUntitled,
  type Session,
} from '../../shared/store/sessions.js';
import type { Provider } from './providers/index.js';

const MAX_TITLE = 60;
const TITLE_TOKENS = 40;
const TITLE_TIMEOUT_MS = 30_000;

/** The first line of a text, cut at a word near MAX_TITLE characters. */
export function firstLineTitle(text: string): string {
  const line = text.trim().split('\n')[0]!.trim();
  if (line.length <= MAX_TITLE) return line;
  const cut = line.slice(0, MAX_TITLE);
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_TITLE / 2 ? cut.slice(0, space) : cut).trim()}…`;
}

/** What a model answered as a title, without quotes, a "Title:" label or a closing full stop. */
function cleanTitle(answer: string): string {
  const line = answer.trim().split('\n')[0] ?? '';
  const bare = line
    .replace(/^(title|titre)\s*:\s*/i, '')
    .replace(/^["'“”‘’*#\s]+|["'“”‘’*\s]+$/g, '')
    .replace(/\.$/, '');
  return firstLineTitle(bare);
}

/**
 * Names a chat still called "New session" after its first turn, for every client (the API,
 * channels, the Web UI): the lite model writes a short title, or, when there is none or it
 * cannot, the first line of the user's message is the title. A title the user set meanwhile is
 * never replaced.
 */
export async function titleChat(opts: {
  db: Db;
  sessionId: string;
  userText: string;
  reply: string;
  lite?: { provider: Provider; model: string };
  announce: (s: Session) => void;
}): Promise<void> {
  if (getSession(opts.db, opts.sessionId)?.title !== sessionDefaults.title) return;
  const title = (opts.lite && (await liteTitle(opts, opts.lite))) || firstLineTitle(opts.userText);
  if (!title) return;
  const s = titleIfUntitled(opts.db, opts.sessionId, title);
  if (s) opts.announce(s);
}

/** The lite model's title for the chat; '' when it cannot give one. */
async function liteTitle(
  opts: { sessionId: string; userText: string; reply: string },
  lite: { provider: Provider; model: string },
): Promise<string> {
  try {
    const answer = await lite.provider.complete({
      model: lite.model,
      maxTokens: TITLE_TOKENS,
      signal: AbortSignal.timeout(TITLE_TIMEOUT_MS),
      messages: [
        {
          role: 'system',
          content:
            'Write a short title (at most six words) for the chat below, in the language of the user. Answer with the title only.',
        },
        {
          role: 'user',
          content: `User: ${opts.userText.slice(0, 2000)}\n\nAssistant: ${opts.reply.slice(0, 1000)}`,
        },
      ],
    });
    return cleanTitle(answer.text);
  } catch (err) {
    log.warn('the lite model could not title a chat; it takes its first line', {
      session: opts.sessionId,
      error: (err as Error).message,
    });
    return '';
  }
}
