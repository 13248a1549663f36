import { z } from 'zod';
import {
  errorFromStream,
  parseErrorBody,
  parseEventJson,
  protocolError,
  type RequestContext,
} from './classify.js';
import type { SseEvent } from './sse.js';
import type {
  Completion,
  ReasoningPart,
  StopReason,
  StreamEvent,
  ToolCall,
  Usage,
} from './types.js';
import { syntheticCallId } from './wire.js';

/**
 * Reading OpenAI chat completion replies, streamed (`chat.completion.chunk` events ending with
 * `[DONE]`) and whole. Fields vary by server: reasoning arrives as `reasoning_content`
 * (DeepSeek, Qwen, Kimi) or `reasoning` (OpenRouter); cached tokens as
 * `prompt_tokens_details.cached_tokens` or DeepSeek's `prompt_cache_hit_tokens`; Kimi puts usage
 * inside the choice. Everything is optional and nullable because servers send null for absent.
 */

const usageSchema = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
  prompt_cache_hit_tokens: z.number().nullish(),
});
type WireUsage = z.infer<typeof usageSchema>;

const toolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z
    .looseObject({ name: z.string().nullish(), arguments: z.string().nullish() })
    .nullish(),
});

const chunkSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        index: z.number().nullish(),
        delta: z
          .looseObject({
            content: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z.array(toolCallDeltaSchema).nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
        usage: usageSchema.nullish(),
      }),
    )
    .nullish(),
  usage: usageSchema.nullish(),
});

const completionSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      message: z.looseObject({
        content: z
          .union([
            z.string(),
            z.array(z.looseObject({ type: z.string(), text: z.string().nullish() })),
          ])
          .nullish(),
        reasoning_content: z.string().nullish(),
        reasoning: z.string().nullish(),
        refusal: z.string().nullish(),
        tool_calls: z
          .array(
            z.looseObject({
              id: z.string().nullish(),
              function: z.looseObject({
                name: z.string(),
                // A few servers send the arguments as an object rather than a JSON string.
                arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
              }),
            }),
          )
          .nullish(),
      }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: usageSchema.nullish(),
});

export function usageOf(u: WireUsage): Usage {
  const prompt = u.prompt_tokens ?? 0;
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0;
  const usage: Usage = {
    input: Math.max(0, prompt - cached),
    output: u.completion_tokens ?? 0,
    cachedInput: cached,
    cacheWrite: 0,
  };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (reasoning != null) usage.reasoning = reasoning;
  return usage;
}

export function stopOf(raw: string | null, hadToolCalls: boolean, refused: boolean): StopReason {
  if (raw === 'length') return 'max_tokens';
  // Some servers say "stop" after tool calls; the calls are what the caller must act on.
  if (hadToolCalls) return 'tool_use';
  if (refused || raw === 'content_filter') return 'refusal';
  if (raw === 'stop') return 'end_turn';
  if (raw === 'tool_calls' || raw === 'function_call') return 'tool_use';
  return 'other';
}

function faultIn(json: unknown): ReturnType<typeof parseErrorBody> {
  if (
    json &&
    typeof json === 'object' &&
    'error' in json &&
    (json as { error: unknown }).error != null
  )
    return parseErrorBody(JSON.stringify(json));
  return undefined;
}

interface CallState {
  ordinal: number;
  id: string | undefined;
  name: string | undefined;
  args: string;
  started: boolean;
  ended: boolean;
}

export async function* parseOpenAIStream(
  events: AsyncIterable<SseEvent>,
  ctx: RequestContext,
): AsyncGenerator<StreamEvent> {
  const calls = new Map<number, CallState>();
  const order: CallState[] = [];
  let lastWire = -1;
  let finish: string | null = null;
  let finished = false;
  let sawDone = false;
  let refused = false;
  let usage: Usage | undefined;

  function* closeCalls(): Generator<StreamEvent> {
    for (const c of order) {
      if (c.ended) continue;
      c.ended = true;
      if (!c.started) throw protocolError(ctx, 'a tool call without a name');
      yield {
        type: 'tool_call_end',
        index: c.ordinal,
        id: c.id!,
        name: c.name!,
        arguments: c.args === '' ? '{}' : c.args,
      };
    }
  }

  for await (const ev of events) {
    if (ev.data.trim() === '[DONE]') {
      sawDone = true;
      break;
    }
    const json = parseEventJson(ev.data, ctx);
    const fault = faultIn(json);
    if (fault) throw errorFromStream(fault, ctx);
    const parsed = chunkSchema.safeParse(json);
    if (!parsed.success)
      throw protocolError(ctx, 'a stream chunk this client cannot read', parsed.error);
    const chunk = parsed.data;
    if (chunk.usage) usage = usageOf(chunk.usage);
    // One reply is asked for (no `n`), so only the first choice matters.
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) continue;
    if (choice.usage) usage = usageOf(choice.usage);
    const delta = choice.delta;
    if (delta) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (reasoning) yield { type: 'reasoning', text: reasoning };
      if (delta.content) yield { type: 'text', text: delta.content };
      if (delta.refusal) {
        refused = true;
        yield { type: 'text', text: delta.refusal };
      }
      for (const tc of delta.tool_calls ?? []) {
        // A fragment without an index continues the last call, unless it brings a new id.
        let wire: number;
        if (tc.index != null) wire = tc.index;
        else if (tc.id && calls.get(lastWire)?.id !== tc.id) wire = lastWire + 1;
        else wire = Math.max(lastWire, 0);
        lastWire = wire;
        let c = calls.get(wire);
        if (!c) {
          c = {
            ordinal: order.length,
            id: undefined,
            name: undefined,
            args: '',
            started: false,
            ended: false,
          };
          calls.set(wire, c);
          order.push(c);
        }
        if (c.ended) throw protocolError(ctx, 'more of a tool call after the reply finished');
        if (tc.id && !c.id) c.id = tc.id;
        if (tc.function?.name && !c.name) c.name = tc.function.name;
        const frag = tc.function?.arguments ?? '';
        c.args += frag;
        if (!c.started && c.name) {
          c.started = true;
          c.id ??= syntheticCallId(c.ordinal);
          yield { type: 'tool_call_start', index: c.ordinal, id: c.id, name: c.name };
          // Fragments that came before the name are delivered now, as one.
          if (c.args) yield { type: 'tool_call_delta', index: c.ordinal, arguments: c.args };
        } else if (c.started && frag)
          yield { type: 'tool_call_delta', index: c.ordinal, arguments: frag };
      }
    }
    if (choice.finish_reason) {
      finish = choice.finish_reason;
      finished = true;
      yield* closeCalls();
    }
  }
  if (!sawDone && !finished)
    throw protocolError(ctx, 'a stream that ended before the reply was complete');
  yield* closeCalls();
  if (usage) yield { type: 'usage', usage };
  yield {
    type: 'done',
    stopReason: stopOf(finish, order.length > 0, refused),
    rawStopReason: finish,
  };
}

export function parseOpenAICompletion(json: unknown, ctx: RequestContext): Completion {
  const fault = faultIn(json);
  if (fault) throw errorFromStream(fault, ctx);
  const parsed = completionSchema.safeParse(json);
  if (!parsed.success) throw protocolError(ctx, 'a reply this client cannot read', parsed.error);
  const choice = parsed.data.choices[0];
  if (!choice) throw protocolError(ctx, 'a reply with no choices');
  const msg = choice.message;
  const text =
    (typeof msg.content === 'string'
      ? msg.content
      : (msg.content ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('')) +
    (msg.refusal ?? '');
  const reasoning = msg.reasoning_content ?? msg.reasoning ?? '';
  const toolCalls: ToolCall[] = (msg.tool_calls ?? []).map((c, i) => {
    const args = c.function.arguments;
    const str = typeof args === 'string' ? args : args == null ? '' : JSON.stringify(args);
    return {
      id: c.id ?? syntheticCallId(i),
      name: c.function.name,
      arguments: str === '' ? '{}' : str,
    };
  });
  const reasoningParts: ReasoningPart[] = reasoning ? [{ type: 'reasoning', text: reasoning }] : [];
  const raw = choice.finish_reason ?? null;
  return {
    text,
    reasoning,
    reasoningParts,
    toolCalls,
    usage: parsed.data.usage ? usageOf(parsed.data.usage) : null,
    stopReason: stopOf(raw, toolCalls.length > 0, Boolean(msg.refusal)),
    rawStopReason: raw,
  };
}
