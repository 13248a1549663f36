import { ProviderError } from './errors.js';
import type { Completion, ReasoningPart, StreamEvent, ToolCall, Usage } from './types.js';

/** Folds a stream into the whole reply, the same shape `complete()` answers. */
export async function collect(events: AsyncIterable<StreamEvent>): Promise<Completion> {
  let text = '';
  let reasoning = '';
  const reasoningParts: ReasoningPart[] = [];
  let open: ReasoningPart | undefined;
  const calls: ToolCall[] = [];
  let usage: Usage | null = null;
  for await (const ev of events) {
    switch (ev.type) {
      case 'text':
        text += ev.text;
        break;
      case 'reasoning':
        reasoning += ev.text;
        if (!open) reasoningParts.push((open = { type: 'reasoning', text: '' }));
        open.text += ev.text;
        break;
      case 'reasoning_end':
        if (ev.signature) {
          if (!open) reasoningParts.push((open = { type: 'reasoning', text: '' }));
          open.signature = ev.signature;
        }
        open = undefined;
        break;
      case 'reasoning_redacted':
        reasoningParts.push({ type: 'reasoning', text: '', redacted: ev.data });
        open = undefined;
        break;
      case 'tool_call_end':
        calls[ev.index] = { id: ev.id, name: ev.name, arguments: ev.arguments };
        break;
      case 'usage':
        usage = ev.usage;
        break;
      case 'done':
        return {
          text,
          reasoning,
          reasoningParts,
          toolCalls: calls.filter(Boolean),
          usage,
          stopReason: ev.stopReason,
          rawStopReason: ev.rawStopReason,
        };
      default:
      // tool_call_start / tool_call_delta are for live display; tool_call_end has the whole call.
    }
  }
  throw new ProviderError('protocol', 'The reply ended without a final event.');
}
