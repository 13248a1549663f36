import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Paths } from '../../shared/paths.js';
import { summaryContent } from '../../shared/protocol/message-content.js';
import type { Db } from '../../shared/store/db.js';
import { appendMessage, messageRowsOf, toMessage, type Message as StoredMessage } from '../../shared/store/messages.js';
import { historyToMessages } from './prompt.js';
import type { Provider } from './providers/index.js';

/** Compact once the live history passes this share of the model's context window. */
const THRESHOLD = 0.75;
const SUMMARY_TOKENS = 2000;

export interface CompactionTarget {
  db: Db;
  paths: Paths;
  sessionId: string;
  contextWindow: number;
  /** The lite slot's model (or the default when lite is empty) does the summarising. */
  summarizer: { provider: Provider; model: string };
  signal: AbortSignal;
  systemChars: number;
}

/** A rough token estimate (4 characters a token): cheap, and only used to decide when to compact. */
export function estimateTokens(messages: StoredMessage[], systemChars: number): number {
  let chars = systemChars;
  for (const m of messages) chars += JSON.stringify(m.content).length;
  return Math.ceil(chars / 4);
}

/**
 * When the history nears the context window, the messages before the current turn's user message
 * are summarised into one system message; the originals stay in the store and are also written to
 * `$SVC_HOME/sessions/<id>/compacted-<from>-<to>.jsonl`. Returns what was compacted, if anything.
 */
export async function maybeCompact(t: CompactionTarget): Promise<{ from_seq: number; to_seq: number; file: string } | undefined> {
  const all = messageRowsOf(t.db, t.sessionId).map(toMessage);
  let after = 0;
  for (const m of all) {
    const s = m.role === 'system' ? summaryContent.safeParse(m.content) : undefined;
    if (s?.success) after = s.data.summary_of.to_seq;
  }
  const live = all.filter((m) => m.seq > after && m.role !== 'system');
  if (estimateTokens(live, t.systemChars) < THRESHOLD * t.contextWindow) return undefined;
  // Cut at the current turn's user message: a tool call and its result never end up on two sides.
  let cut = -1;
  for (let i = live.length - 1; i >= 0; i--) if (live[i]?.role === 'user') { cut = i; break; }
  if (cut <= 0) return undefined;
  const older = live.slice(0, cut);
  const from_seq = older[0]!.seq;
  const to_seq = older[older.length - 1]!.seq;
  const dir = join(t.paths.home, 'sessions', t.sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `compacted-${from_seq}-${to_seq}.jsonl`);
  writeFileSync(file, older.map((m) => JSON.stringify(m)).join('\n') + '\n', { mode: 0o600 });

  const transcript = historyToMessages(older)
    .map((m) => `${m.role.toUpperCase()}: ${typeof m.content === 'string' ? m.content : m.content.map((p) => ('text' in p ? p.text : '[image]')).join('\n')}${m.role === 'assistant' && m.toolCalls ? `\n(called ${m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ')})` : ''}`)
    .join('\n\n');
  const summary = await t.summarizer.provider.complete({
    model: t.summarizer.model,
    maxTokens: SUMMARY_TOKENS,
    signal: t.signal,
    messages: [
      { role: 'system', content: 'Summarise this conversation between a user and their agent so the agent can continue it: the user\'s requests, decisions, facts learned, files and commands involved, and what is still open. Be concise and concrete.' },
      { role: 'user', content: transcript },
    ],
  });
  appendMessage(t.db, t.sessionId, { role: 'system', content: { text: summary.text, summary_of: { from_seq, to_seq, file } } });
  return { from_seq, to_seq, file };
}
