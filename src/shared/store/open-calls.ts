import { assistantContent, toolContent } from '../protocol/message-content.js';
import type { Db } from './db.js';
import { appendMessage, type Message, type MessageRow, toMessage } from './messages.js';
import { stmt } from './util.js';

/** How a turn ended without a call's result: what the stored result says, for a person and the model. */
export type Unfinished = 'interrupted' | 'failed';

export const UNFINISHED_OUTPUT: Record<Unfinished, string> = {
  interrupted: 'Stopped before it finished.',
  failed: 'Did not finish: the turn failed before this call returned.',
};

/** A stored result written for a call its turn left open. */
export interface ClosedCall {
  call: { id: string; name: string };
  output: string;
  message: Message;
}

/**
 * Stores a result for every tool call of an ended turn that has none (a tool that threw when the
 * turn was stopped, an approval still waiting, a worker that died), so the transcript a client
 * loads and the next turn's provider context (a model API refuses a call without a result) agree
 * that the call ended. The turn's messages are the session's from its first message on (one turn
 * at a time per session); a turn that never noted its first message (a workflow run's) takes those
 * written since it started. Call inside the transaction that ends the turn.
 */
export function closeOpenCalls(
  db: Db,
  turn: { session_id: string; first_seq: number | null; started_at: string },
  how: Unfinished,
): ClosedCall[] {
  const rows = stmt<[string, number, string], MessageRow>(
    db,
    `SELECT id, session_id, seq, role, content, created_at FROM messages
     WHERE session_id = ? AND seq >= ? AND created_at >= ? AND role IN ('assistant', 'tool')
     ORDER BY seq`,
  ).all(turn.session_id, turn.first_seq ?? 0, turn.first_seq === null ? turn.started_at : '');
  // A result answers the call of that id in the latest reply before it (ids repeat across replies).
  let open: Array<{ id: string; name: string }> = [];
  for (const r of rows) {
    const content = toMessage(r).content;
    if (r.role === 'assistant') {
      const calls = assistantContent.safeParse(content).data?.tool_calls ?? [];
      if (calls.length > 0) open = calls.map((c) => ({ id: c.id, name: c.name }));
    } else {
      const id = toolContent.safeParse(content).data?.tool_call_id;
      const at = open.findIndex((c) => c.id === id);
      if (at >= 0) open.splice(at, 1);
    }
  }
  const output = UNFINISHED_OUTPUT[how];
  return open.map((call) => ({
    call,
    output,
    message: appendMessage(db, turn.session_id, {
      role: 'tool',
      content: {
        tool_call_id: call.id,
        name: call.name,
        output,
        is_error: true,
        unfinished: how,
      },
    }),
  }));
}
