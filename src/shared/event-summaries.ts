import { jsonBytes, previewText, summarize, SUMMARY_BYTES } from './protocol/event-cap.js';
import type { LoginState } from './protocol/channels.js';
import type { MessageSummary, WsEventData } from './protocol/events.js';
import type { Goal } from './store/goals.js';
import type { Message } from './store/messages.js';

/**
 * The summaries `/ws` events carry instead of whole values (issue 22: an event is at most 4 KB
 * whatever the session's size). Each says `truncated: true` when it cut something; the REST
 * route named in the event's catalogue entry answers the whole.
 */

/** A stored message, its long texts cut (GET /api/sessions/{id}/messages/{message_id} has it whole). */
export function messageSummary(
  m: Message,
  maxBytes: number = SUMMARY_BYTES.message,
): MessageSummary {
  return summarize(m, maxBytes);
}

export function goalSummary(g: Goal): WsEventData<'goal.updated'> {
  return summarize(g, SUMMARY_BYTES.text);
}

/** turn.tool_result: the output's start and the tool message's summary. */
export function toolResultData(
  call: { id: string; name: string },
  output: string,
  isError: boolean,
  message: Message,
): Omit<WsEventData<'turn.tool_result'>, 'turn_id'> {
  const p = previewText(output, SUMMARY_BYTES.toolOutput);
  return {
    call_id: call.id,
    name: call.name,
    output: p.text,
    is_error: isError,
    ...(p.truncated ? { truncated: true as const } : {}),
    message: messageSummary(message, SUMMARY_BYTES.toolMessage),
  };
}

/** turn.tool_call: the arguments' start (the committed assistant message has them whole). */
export function toolCallData(call: {
  id: string;
  name: string;
  arguments: string;
}): Omit<WsEventData<'turn.tool_call'>, 'turn_id'> {
  const p = previewText(call.arguments, SUMMARY_BYTES.text);
  return {
    call_id: call.id,
    name: call.name,
    arguments: p.text,
    ...(p.truncated ? { truncated: true as const } : {}),
  };
}

/** A text field cut for an event, with the flag when it was. */
export function textPreview(text: string): { text: string; truncated?: true } {
  const p = previewText(text, SUMMARY_BYTES.text);
  return p.truncated ? { text: p.text, truncated: true } : { text };
}

/** approval.requested: its input and reason cut when long (GET /api/sessions/{id}/approvals has them whole). */
export function approvalData<T extends { approval_id: string; input: unknown; reason: string }>(
  data: T,
): T & { truncated?: true } {
  return summarize(data, SUMMARY_BYTES.text);
}

/** Any view (a task, an approval's input, a run's inputs) cut to an event's budget. */
export function viewSummary<T extends object>(view: T): T & { truncated?: true } {
  return summarize(view, SUMMARY_BYTES.text);
}

/** channels.login: without the QR code's PNG when that would not fit (GET /api/channels/messenger/login has it). */
export function loginEvent(state: LoginState): WsEventData<'channels.login'> {
  return jsonBytes(state) <= SUMMARY_BYTES.text
    ? state
    : { ...state, qr_png: null, truncated: true };
}
