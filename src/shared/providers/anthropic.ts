import { parseAnthropicCompletion, parseAnthropicStream } from './anthropic-parse.js';
import type { ChatRequest, ImagePart, Message, ReasoningEffort, TextPart } from './types.js';
import { basePath, parseBaseUrl, userAgent, type WireAdapter } from './wire.js';

/**
 * Anthropic messages. The request differs from OpenAI's in shape more than in meaning: the
 * system prompt is a field, tool results are user-message blocks, consecutive messages of one
 * role must be merged, and thinking blocks go back with their signatures.
 */

export const ANTHROPIC_VERSION = '2023-06-01';
export const DEFAULT_MAX_TOKENS = 8192;

/** Thinking budget per effort, in tokens (the API's minimum budget is 1024). */
export const thinkingBudgets: Record<Exclude<ReasoningEffort, 'off'>, number> = {
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32000,
};

/** Room for the answer itself: max_tokens covers thinking and answer, and must exceed the budget. */
const ANSWER_ROOM = 4096;

export function thinkingFields(
  effort: ReasoningEffort | undefined,
  maxTokens: number | undefined,
): Record<string, unknown> {
  const requested = maxTokens ?? DEFAULT_MAX_TOKENS;
  if (effort === undefined || effort === 'off') return { max_tokens: requested };
  const budget = thinkingBudgets[effort];
  return {
    max_tokens: Math.max(requested, budget + ANSWER_ROOM),
    thinking: { type: 'enabled', budget_tokens: budget },
  };
}

type Block = Record<string, unknown>;
interface WireMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

const ephemeral = { type: 'ephemeral' };

function imageBlock(p: ImagePart): Block {
  return {
    type: 'image',
    source:
      'url' in p
        ? { type: 'url', url: p.url }
        : { type: 'base64', media_type: p.mediaType, data: p.data },
  };
}

function blocksOf(content: string | Array<TextPart | ImagePart>): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  // The API rejects empty text blocks.
  return content.flatMap((p) =>
    p.type === 'text' ? (p.text === '' ? [] : [{ type: 'text', text: p.text }]) : [imageBlock(p)],
  );
}

function parseInput(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    // The model wrote broken JSON; the tool result already told it so. The API needs an object.
    return {};
  }
}

export function toAnthropicMessages(messages: Message[]): {
  system: Block[];
  messages: WireMessage[];
} {
  const system: Block[] = [];
  const out: WireMessage[] = [];
  const push = (role: WireMessage['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = out[out.length - 1];
    // Roles must alternate: tool results and a following user message form one user turn.
    if (last && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const msg of messages) {
    switch (msg.role) {
      case 'system':
        if (msg.content !== '') system.push({ type: 'text', text: msg.content });
        break;
      case 'user':
        push('user', blocksOf(msg.content));
        break;
      case 'assistant': {
        const blocks: Block[] = [];
        const parts =
          typeof msg.content === 'string'
            ? [{ type: 'text' as const, text: msg.content }]
            : msg.content;
        for (const p of parts) {
          if (p.type === 'text') {
            if (p.text !== '') blocks.push({ type: 'text', text: p.text });
          } else if (p.redacted !== undefined)
            blocks.push({ type: 'redacted_thinking', data: p.redacted });
          // Reasoning without a signature (from another provider) cannot be sent back; drop it.
          else if (p.signature)
            blocks.push({ type: 'thinking', thinking: p.text, signature: p.signature });
        }
        for (const c of msg.toolCalls ?? [])
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: parseInput(c.arguments) });
        if (!blocks.some((b) => b.type === 'text' || b.type === 'tool_use'))
          blocks.push({ type: 'text', text: '[no content]' });
        push('assistant', blocks);
        break;
      }
      case 'tool': {
        const blocks = blocksOf(msg.content);
        const onlyText = blocks.every((b) => b.type === 'text');
        const content = onlyText ? blocks.map((b) => b.text as string).join('\n') : blocks;
        const result: Block = { type: 'tool_result', tool_use_id: msg.toolCallId, content };
        if (msg.isError) result.is_error = true;
        push('user', [result]);
        break;
      }
    }
  }
  return { system, messages: out };
}

export const anthropicAdapter: WireAdapter = {
  url(baseUrl) {
    const url = parseBaseUrl(baseUrl);
    // SDK convention: the base is the origin (or a gateway prefix); "/v1" is ours to add unless present.
    const path = basePath(url);
    url.pathname = path.endsWith('/v1') ? `${path}/messages` : `${path}/v1/messages`;
    return url;
  },
  headers(apiKey, stream) {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      'user-agent': userAgent,
    };
    if (apiKey) h['x-api-key'] = apiKey;
    return h;
  },
  body(req: ChatRequest, stream: boolean) {
    const { system, messages } = toAnthropicMessages(req.messages);
    const body: Record<string, unknown> = {
      model: req.model,
      ...thinkingFields(req.reasoningEffort, req.maxTokens),
      messages,
      stream,
    };
    const tools = (req.tools ?? []).map(
      (t): Block => ({ name: t.name, description: t.description, input_schema: t.parameters }),
    );
    // Prompt caching: mark the end of the stable prefix (system, else tools) and of the newest message.
    const lastSystem = system[system.length - 1];
    if (lastSystem) lastSystem.cache_control = ephemeral;
    else if (tools.length > 0) tools[tools.length - 1]!.cache_control = ephemeral;
    const lastBlock = messages[messages.length - 1]?.content.at(-1);
    if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking')
      lastBlock.cache_control = ephemeral;
    if (system.length > 0) body.system = system;
    if (tools.length > 0) body.tools = tools;
    return body;
  },
  parseStream: parseAnthropicStream,
  parseCompletion: parseAnthropicCompletion,
};
