import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Paths } from '../../shared/paths.js';
import { summaryContent } from '../../shared/protocol/message-content.js';
import type { Db } from '../../shared/store/db.js';
import { appendMessage, type Message as StoredMessage } from '../../shared/store/messages.js';
import type { LiveWindow } from './live-window.js';
import { historyToMessages } from './prompt.js';
import type { Provider } from './providers/index.js';

/** Compact once the live history passes this share of the model's context window. */
const THRESHOLD = 0.75;
const SUMMARY_TOKENS = 2000;
/** Tokens set aside for the summariser's instructions and framing. */
const PROMPT_TOKENS = 100;
/** Levels of summaries of summaries before the oldest text is left out to fit. */
const MAX_DEPTH = 6;

const INSTRUCTIONS =
  "Summarise this conversation between a user and their agent so the agent can continue it: the user's requests, decisions, facts learned, files and commands involved, and what is still open. Be concise and concrete.";

export interface CompactionTarget {
  db: Db;
  paths: Paths;
  sessionId: string;
  contextWindow: number;
  /** The lite slot's model (or the default when lite is empty) does the summarising; its own context window bounds each request. */
  summarizer: { provider: Provider; model: string; contextWindow: number };
  signal: AbortSignal;
  systemChars: number;
  /** The turn's live window (the latest summary and what follows it). */
  window: LiveWindow;
}

/** A rough token estimate (4 characters a token): cheap, and only used to decide when to compact. */
export function estimateTokens(messages: readonly StoredMessage[], systemChars: number): number {
  let chars = systemChars;
  for (const m of messages) chars += JSON.stringify(m.content).length;
  return Math.ceil(chars / 4);
}

/**
 * When the history nears the context window, the messages before the current turn's user message
 * are summarised into one system message; the originals stay in the store and are also written to
 * `$SVC_HOME/sessions/<id>/compacted-<from>-<to>.jsonl`. Returns what was compacted, if anything.
 */
export async function maybeCompact(
  t: CompactionTarget,
): Promise<{ from_seq: number; to_seq: number; file: string; requests: number } | undefined> {
  const all = t.window.messages;
  let after = 0;
  for (const m of all) {
    const s = m.role === 'system' ? summaryContent.safeParse(m.content) : undefined;
    if (s?.success) after = s.data.summary_of.to_seq;
  }
  const live = all.filter((m) => m.seq > after && m.role !== 'system');
  if (estimateTokens(live, t.systemChars) < THRESHOLD * t.contextWindow) return undefined;
  // Cut at the current turn's user message: a tool call and its result never end up on two sides.
  let cut = -1;
  for (let i = live.length - 1; i >= 0; i--)
    if (live[i]?.role === 'user') {
      cut = i;
      break;
    }
  if (cut <= 0) return undefined;
  const older = live.slice(0, cut);
  const from_seq = older[0]!.seq;
  const to_seq = older[older.length - 1]!.seq;
  const dir = join(t.paths.home, 'sessions', t.sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `compacted-${from_seq}-${to_seq}.jsonl`);
  writeFileSync(file, older.map((m) => JSON.stringify(m)).join('\n') + '\n', { mode: 0o600 });

  // A summary made earlier stays in what is summarised, so nothing it held is lost.
  const previous = all.findLast(
    (m) => m.role === 'system' && summaryContent.safeParse(m.content).success,
  );
  const prior = previous ? [`EARLIER SUMMARY: ${summaryContent.parse(previous.content).text}`] : [];
  const entries = [
    ...prior,
    ...historyToMessages(older).map(
      (m) =>
        `${m.role.toUpperCase()}: ${typeof m.content === 'string' ? m.content : m.content.map((p) => ('text' in p ? p.text : '[image]')).join('\n')}${m.role === 'assistant' && m.toolCalls ? `\n(called ${m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ')})` : ''}`,
    ),
  ];
  const counter = { requests: 0 };
  const text = await summarise(t, entries, counter, 0);
  appendMessage(t.db, t.sessionId, {
    role: 'system',
    content: { text, summary_of: { from_seq, to_seq, file } },
  });
  return { from_seq, to_seq, file, requests: counter.requests };
}

/** What one summarising request may carry, in characters, and the summary's own length in tokens. */
export function summaryBudget(contextWindow: number): {
  inputChars: number;
  summaryTokens: number;
} {
  const summaryTokens = Math.min(SUMMARY_TOKENS, Math.floor(contextWindow / 4));
  // 4 characters a token, less a tenth for the estimate's error.
  const inputChars = Math.floor(
    (contextWindow - summaryTokens - PROMPT_TOKENS - INSTRUCTIONS.length / 4) * 4 * 0.9,
  );
  return { inputChars: Math.max(1000, inputChars), summaryTokens };
}

/**
 * Summarises `entries` (transcript lines, in order) in requests that each fit the summariser's
 * context window: one when they fit, else a summary of each piece, then a summary of those
 * summaries, as many levels as it takes.
 */
async function summarise(
  t: CompactionTarget,
  entries: string[],
  counter: { requests: number },
  depth: number,
): Promise<string> {
  const { inputChars, summaryTokens } = summaryBudget(t.summarizer.contextWindow);
  const pieces = chunk(entries, inputChars);
  if (pieces.length === 1 || depth >= MAX_DEPTH) {
    // Past the last level, the newest text is what the agent most needs: the oldest is left out.
    const only = pieces.length === 1 ? pieces[0]! : pieces.slice(-1)[0]!;
    return once(t, only, summaryTokens, counter);
  }
  const parts: string[] = [];
  for (const [i, piece] of pieces.entries())
    parts.push(
      `SUMMARY OF PART ${i + 1} OF ${pieces.length}: ${await once(t, piece, summaryTokens, counter)}`,
    );
  return summarise(t, parts, counter, depth + 1);
}

async function once(
  t: CompactionTarget,
  transcript: string,
  maxTokens: number,
  counter: { requests: number },
): Promise<string> {
  counter.requests++;
  const r = await t.summarizer.provider.complete({
    model: t.summarizer.model,
    maxTokens,
    signal: t.signal,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: transcript },
    ],
  });
  return r.text;
}

/** Joins entries into pieces of at most `max` characters; an entry longer than that is cut into several. */
export function chunk(entries: string[], max: number): string[] {
  const out: string[] = [];
  let cur = '';
  const push = () => {
    if (cur !== '') out.push(cur);
    cur = '';
  };
  for (const e of entries) {
    if (e.length > max) {
      push();
      for (let i = 0; i < e.length; i += max) out.push(e.slice(i, i + max));
      continue;
    }
    if (cur.length + e.length + 2 > max) push();
    cur = cur === '' ? e : `${cur}\n\n${e}`;
  }
  push();
  return out.length > 0 ? out : [''];
}
