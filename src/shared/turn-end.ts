import { messageSummary, textPreview, toolResultData } from './event-summaries.js';
import { log } from './log.js';
import type { WsEventData } from './protocol/events.js';
import type { Db } from './store/db.js';
import { appendMessage, type Message } from './store/messages.js';
import { type ClosedCall, closeOpenCalls } from './store/open-calls.js';
import { endTurnRow, getTurnRow, type TurnRef } from './store/turns.js';
import type { TurnPublish } from './ws-publish.js';

type Told<T extends 'turn.completed' | 'turn.failed' | 'turn.interrupted'> = Omit<
  WsEventData<T>,
  'turn_id'
>;

/** How a turn ended: its end event's data (a completed turn's whole reply; the event carries its start). */
export type TurnEnd =
  | (Omit<Told<'turn.completed'>, 'reply' | 'truncated'> & { reply: string })
  | Told<'turn.failed'>
  | Told<'turn.interrupted'>;

/** The text a reply had streamed when it was cut short, and the model that wrote it. */
export interface CutReply {
  text: string;
  model?: string;
}

/**
 * Ends a turn, for the agent worker that ran it and for the supervisor when that worker died:
 * in one write, a result for each tool call it left without one (see closeOpenCalls), the reply it
 * was cut short in (kept as a stopped message) and the end on its row (written when there is none
 * yet); then its clients hear those results and the end, once. A turn already ended by
 * the other process answers false and says nothing. A write that fails (a full disk) is logged and
 * the end is told all the same: no client waits for a turn that is over.
 */
export function endTurn(
  db: Db,
  publish: TurnPublish,
  turn: TurnRef,
  end: TurnEnd,
  cut?: CutReply,
): boolean {
  let endedHere = true;
  let kept: Message | undefined;
  let closed: ClosedCall[] = [];
  try {
    db.transaction(() => {
      endedHere = endTurnRow(db, turn, end.status, rowOf(end));
      if (!endedHere) return;
      if (end.status !== 'completed') {
        const row = getTurnRow(db, turn.id);
        if (row) closed = closeOpenCalls(db, row, end.status);
      }
      if (!cut?.text) return;
      kept = appendMessage(db, turn.session_id, {
        role: 'assistant',
        content: {
          text: cut.text,
          stop_reason: end.status === 'interrupted' ? 'interrupted' : 'error',
          ...(cut.model ? { model: cut.model } : {}),
        },
      });
    }).immediate();
  } catch (err) {
    kept = undefined;
    closed = [];
    log.warn('could not record the end of a turn', {
      turn: turn.id,
      error: (err as Error).message,
    });
  }
  if (!endedHere) return false;
  for (const { call, output, message } of closed)
    publish('turn.tool_result', toolResultData(call, output, true, message));
  if (kept) publish('message.committed', { message: messageSummary(kept) });
  if (end.status === 'completed') {
    const { text, truncated } = textPreview(end.reply);
    publish('turn.completed', { ...end, reply: text, ...(truncated ? { truncated } : {}) });
  } else if (end.status === 'failed') publish('turn.failed', end);
  else publish('turn.interrupted', end);
  return true;
}

function rowOf(end: TurnEnd): Parameters<typeof endTurnRow>[3] {
  if (end.status === 'completed')
    return { usage: end.usage, reply: end.reply, stop_reason: end.stop_reason };
  return {
    ...(end.reason !== undefined ? { reason: end.reason } : {}),
    ...(end.message !== undefined ? { error: end.message } : {}),
  };
}
