import type { TurnInfo } from './chat';
import type { Message, MessageOf } from './types';

/** One committed message as the transcript draws it. */
export interface Row {
  m: Message;
  /** Tool results paired with this message's calls, by call id. */
  results: ReadonlyMap<string, MessageOf<'tool'>> | undefined;
  /** A tool result drawn inside its call's card: the row draws only its turn's details, if any. */
  folded: boolean;
  /** The ended turn whose last message this is: its details follow the message. */
  end: TurnInfo | undefined;
}

/**
 * The rows of a chat: each tool result paired with its call in the latest assistant message
 * before it (call ids are not unique across a session: some providers number them per reply),
 * and each ended turn placed after its last message. A user message starts a turn; one the list
 * has no turn for (older than its page, or just sent) shows none.
 */
export function rowsOf(messages: Message[], turns: ReadonlyMap<number, TurnInfo>): Row[] {
  const rows: Row[] = messages.map((m) => ({
    m,
    results: undefined,
    folded: false,
    end: undefined,
  }));
  let open: Array<{ row: Row; call: string }> = [];
  let turn: TurnInfo | undefined;
  rows.forEach((row, i) => {
    const m = row.m;
    const calls = m.role === 'assistant' ? (m.content?.tool_calls ?? []) : [];
    if (calls.length > 0) {
      row.results = new Map();
      open = calls.map((c) => ({ row, call: c.id }));
    } else if (m.role === 'tool') {
      const at = open.findIndex((o) => o.call === m.content?.tool_call_id);
      if (at >= 0) {
        (open[at]!.row.results as Map<string, MessageOf<'tool'>>).set(open[at]!.call, m);
        row.folded = true;
        open.splice(at, 1);
      }
    }
    if (m.role === 'user') turn = turns.get(m.seq);
    const next = messages[i + 1];
    if (turn && turn.status !== 'running' && (!next || next.role === 'user')) {
      row.end = turn;
      turn = undefined;
    }
  });
  return rows;
}

const sameResults = (
  a: ReadonlyMap<string, MessageOf<'tool'>> | undefined,
  b: ReadonlyMap<string, MessageOf<'tool'>> | undefined,
) => a === b || (!!a && !!b && a.size === b.size && [...a].every(([k, v]) => b.get(k) === v));

const sameRow = (a: Row, b: Row) =>
  a.m === b.m && a.folded === b.folded && a.end === b.end && sameResults(a.results, b.results);

/**
 * The rows cut into chunks of `size`, counted from the oldest. A chunk whose rows are the same as
 * in `before` is that same array, so a new message or a turn's end redraws the chunk it touches
 * and no other.
 */
export function chunksOf(rows: Row[], size: number, before: readonly Row[][]): Row[][] {
  const out: Row[][] = [];
  for (let from = 0, c = 0; from < rows.length; from += size, c++) {
    const next = rows.slice(from, from + size);
    const prev = before[c];
    out.push(
      prev && prev.length === next.length && prev.every((r, i) => sameRow(r, next[i]!))
        ? prev
        : next,
    );
  }
  return out;
}
