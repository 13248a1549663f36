import { z } from 'zod';
import { errorFromStream, parseEventJson, protocolError, type RequestContext } from './classify.js';
import type { SseEvent } from './sse.js';
import type {
  Completion,
  ReasoningPart,
  StopReason,
  StreamEvent,
  ToolCall,
  Usage,
} from './types.js';

/**
 * Reading Anthropic message replies. A stream is message_start, then per content block a
 * start / deltas / stop, then message_delta (stop reason, output tokens) and message_stop; ping
 * and error may come at any time. Event types and block types this client does not know are
 * skipped, as Anthropic's versioning policy asks.
 */

const usageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
});
type WireUsage = z.infer<typeof usageSchema>;

const blockSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  data: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
});

const faultSchema = z.looseObject({ type: z.string().nullish(), message: z.string().nullish() });

const eventSchemas = {
  message_start: z.looseObject({ message: z.looseObject({ usage: usageSchema.nullish() }) }),
  content_block_start: z.looseObject({ index: z.number().int(), content_block: blockSchema }),
  content_block_delta: z.looseObject({
    index: z.number().int(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      partial_json: z.string().nullish(),
    }),
  }),
  content_block_stop: z.looseObject({ index: z.number().int() }),
  message_delta: z.looseObject({
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: usageSchema.nullish(),
  }),
  message_stop: z.looseObject({}),
  error: z.looseObject({ error: faultSchema }),
} as const;

const typedSchema = z.looseObject({ type: z.string() });

const messageSchema = z.looseObject({
  content: z.array(blockSchema),
  stop_reason: z.string().nullish(),
  usage: usageSchema.nullish(),
});

function addUsage(into: Usage, u: WireUsage): void {
  // message_delta counts are cumulative, so a later value replaces an earlier one.
  if (u.input_tokens != null) into.input = u.input_tokens;
  if (u.output_tokens != null) into.output = u.output_tokens;
  if (u.cache_read_input_tokens != null) into.cachedInput = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens != null) into.cacheWrite = u.cache_creation_input_tokens;
}

export function stopOf(raw: string | null, hadToolCalls: boolean): StopReason {
  if (raw === 'max_tokens' || raw === 'model_context_window_exceeded') return 'max_tokens';
  // Some Anthropic-compatible gateways say end_turn after a tool call; the call is what matters.
  if (hadToolCalls) return 'tool_use';
  switch (raw) {
    case 'end_turn':
    case 'tool_use':
    case 'stop_sequence':
    case 'refusal':
      return raw;
    default:
      return 'other';
  }
}

function isEmptyObject(v: unknown): boolean {
  return v == null || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

type BlockState =
  | { kind: 'text' | 'redacted' | 'other' }
  | { kind: 'thinking'; signature: string }
  | { kind: 'tool'; ordinal: number; id: string; name: string; json: string; startInput: unknown };

export async function* parseAnthropicStream(
  events: AsyncIterable<SseEvent>,
  ctx: RequestContext,
): AsyncGenerator<StreamEvent> {
  const blocks = new Map<number, BlockState>();
  const usage: Usage = { input: 0, output: 0, cachedInput: 0, cacheWrite: 0 };
  let sawUsage = false;
  let tools = 0;
  let stop: string | null = null;
  let stopped = false;

  const parse = <K extends keyof typeof eventSchemas>(
    type: K,
    json: unknown,
  ): z.infer<(typeof eventSchemas)[K]> => {
    const r = eventSchemas[type].safeParse(json);
    if (!r.success) throw protocolError(ctx, `a ${type} event this client cannot read`, r.error);
    return r.data as z.infer<(typeof eventSchemas)[K]>;
  };
  const block = (index: number): BlockState => {
    const b = blocks.get(index);
    if (!b) throw protocolError(ctx, `a delta for content block ${index}, which never started`);
    return b;
  };

  for await (const ev of events) {
    const json = parseEventJson(ev.data, ctx);
    const head = typedSchema.safeParse(json);
    if (!head.success) throw protocolError(ctx, 'a stream event without a type', head.error);
    switch (head.data.type) {
      case 'message_start': {
        const u = parse('message_start', json).message.usage;
        if (u) {
          addUsage(usage, u);
          sawUsage = true;
        }
        break;
      }
      case 'content_block_start': {
        const { index, content_block: b } = parse('content_block_start', json);
        if (b.type === 'text') {
          blocks.set(index, { kind: 'text' });
          if (b.text) yield { type: 'text', text: b.text };
        } else if (b.type === 'thinking') {
          blocks.set(index, { kind: 'thinking', signature: b.signature ?? '' });
          if (b.thinking) yield { type: 'reasoning', text: b.thinking };
        } else if (b.type === 'redacted_thinking') {
          blocks.set(index, { kind: 'redacted' });
          if (b.data) yield { type: 'reasoning_redacted', data: b.data };
        } else if (b.type === 'tool_use') {
          if (!b.id || !b.name) throw protocolError(ctx, 'a tool_use block without an id or name');
          const state = {
            kind: 'tool' as const,
            ordinal: tools++,
            id: b.id,
            name: b.name,
            json: '',
            startInput: b.input,
          };
          blocks.set(index, state);
          yield { type: 'tool_call_start', index: state.ordinal, id: state.id, name: state.name };
        } else blocks.set(index, { kind: 'other' });
        break;
      }
      case 'content_block_delta': {
        const { index, delta } = parse('content_block_delta', json);
        const b = block(index);
        if (delta.type === 'text_delta' && b.kind === 'text') {
          if (delta.text) yield { type: 'text', text: delta.text };
        } else if (delta.type === 'thinking_delta' && b.kind === 'thinking') {
          if (delta.thinking) yield { type: 'reasoning', text: delta.thinking };
        } else if (delta.type === 'signature_delta' && b.kind === 'thinking') {
          b.signature += delta.signature ?? '';
        } else if (delta.type === 'input_json_delta' && b.kind === 'tool') {
          const frag = delta.partial_json ?? '';
          b.json += frag;
          if (frag) yield { type: 'tool_call_delta', index: b.ordinal, arguments: frag };
        }
        // Other deltas (citations, server tools) carry nothing this client uses.
        break;
      }
      case 'content_block_stop': {
        const { index } = parse('content_block_stop', json);
        const b = block(index);
        if (b.kind === 'thinking')
          yield b.signature
            ? { type: 'reasoning_end', signature: b.signature }
            : { type: 'reasoning_end' };
        else if (b.kind === 'tool') {
          // A gateway that sends the whole input in the start block and no deltas still works.
          if (b.json === '' && !isEmptyObject(b.startInput)) {
            b.json = JSON.stringify(b.startInput);
            yield { type: 'tool_call_delta', index: b.ordinal, arguments: b.json };
          }
          yield {
            type: 'tool_call_end',
            index: b.ordinal,
            id: b.id,
            name: b.name,
            arguments: b.json === '' ? '{}' : b.json,
          };
        }
        break;
      }
      case 'message_delta': {
        const d = parse('message_delta', json);
        if (d.delta.stop_reason) stop = d.delta.stop_reason;
        if (d.usage) {
          addUsage(usage, d.usage);
          sawUsage = true;
        }
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case 'error': {
        const { error } = parse('error', json);
        throw errorFromStream(
          { type: error.type ?? undefined, message: error.message ?? undefined },
          ctx,
        );
      }
      default:
      // ping, and event types newer than this client.
    }
    if (stopped) break;
  }
  if (!stopped) throw protocolError(ctx, 'a stream that ended before the reply was complete');
  if (sawUsage) yield { type: 'usage', usage };
  yield { type: 'done', stopReason: stopOf(stop, tools > 0), rawStopReason: stop };
}

export function parseAnthropicCompletion(json: unknown, ctx: RequestContext): Completion {
  const head = typedSchema.safeParse(json);
  if (head.success && head.data.type === 'error') {
    const r = eventSchemas.error.safeParse(json);
    throw errorFromStream(
      { type: r.data?.error.type ?? undefined, message: r.data?.error.message ?? undefined },
      ctx,
    );
  }
  const parsed = messageSchema.safeParse(json);
  if (!parsed.success) throw protocolError(ctx, 'a reply this client cannot read', parsed.error);
  let text = '';
  const reasoningParts: ReasoningPart[] = [];
  const toolCalls: ToolCall[] = [];
  for (const b of parsed.data.content) {
    if (b.type === 'text') text += b.text ?? '';
    else if (b.type === 'thinking')
      reasoningParts.push({
        type: 'reasoning',
        text: b.thinking ?? '',
        ...(b.signature ? { signature: b.signature } : {}),
      });
    else if (b.type === 'redacted_thinking')
      reasoningParts.push({ type: 'reasoning', text: '', redacted: b.data ?? '' });
    else if (b.type === 'tool_use') {
      if (!b.id || !b.name) throw protocolError(ctx, 'a tool_use block without an id or name');
      toolCalls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
    }
  }
  let usage: Usage | null = null;
  if (parsed.data.usage)
    addUsage((usage = { input: 0, output: 0, cachedInput: 0, cacheWrite: 0 }), parsed.data.usage);
  const raw = parsed.data.stop_reason ?? null;
  return {
    text,
    reasoning: reasoningParts.map((p) => p.text).join(''),
    reasoningParts,
    toolCalls,
    usage,
    stopReason: stopOf(raw, toolCalls.length > 0),
    rawStopReason: raw,
  };
}
