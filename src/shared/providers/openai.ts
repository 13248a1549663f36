import { parseOpenAIStream, parseOpenAICompletion } from './openai-parse.js';
import type { ChatRequest, ImagePart, Message, ReasoningEffort, TextPart } from './types.js';
import { basePath, parseBaseUrl, userAgent, type WireAdapter } from './wire.js';

/**
 * OpenAI chat completions, and the many servers that copy it. Servers differ in how they take a
 * reasoning effort and whether they want reasoning sent back; the dialect (from the catalog's
 * provider id) picks the variant. Unknown providers get the plainest form.
 */

export type OpenAIDialect =
  | 'openai'
  | 'openrouter'
  | 'deepseek'
  | 'moonshot'
  | 'qwen'
  | 'gemini'
  | 'generic';

export function dialectOf(providerId: string | undefined): OpenAIDialect {
  switch (providerId) {
    case 'openai':
    case 'openrouter':
    case 'deepseek':
    case 'moonshot':
    case 'qwen':
    case 'gemini':
      return providerId;
    default:
      return 'generic';
  }
}

/** Effort → request fields. `undefined` sends nothing, so the model's own default applies. */
export function reasoningFields(
  dialect: OpenAIDialect,
  effort: ReasoningEffort | undefined,
): Record<string, unknown> {
  if (effort === undefined) return {};
  switch (dialect) {
    case 'openai':
      // OpenAI has no portable "off" (older reasoning models reject "none"): leave it to the model.
      if (effort === 'off') return {};
      return { reasoning_effort: effort === 'max' ? 'xhigh' : effort };
    case 'openrouter':
      return {
        reasoning: { effort: effort === 'off' ? 'none' : effort === 'max' ? 'xhigh' : effort },
      };
    case 'deepseek':
      if (effort === 'off') return { thinking: { type: 'disabled' } };
      return {
        thinking: { type: 'enabled' },
        reasoning_effort: effort === 'low' ? 'low' : effort === 'max' ? 'max' : 'high',
      };
    case 'moonshot':
      // Kimi thinks by default; it can only be switched off.
      return effort === 'off' ? { thinking: { type: 'disabled' } } : {};
    case 'qwen':
      return { enable_thinking: effort !== 'off' };
    case 'gemini':
    case 'generic':
      if (effort === 'off') return {};
      return { reasoning_effort: effort === 'xhigh' || effort === 'max' ? 'high' : effort };
  }
}

/** Dialects whose servers want earlier reasoning sent back with the assistant messages. */
const replaysReasoning: ReadonlySet<OpenAIDialect> = new Set(['deepseek', 'moonshot']);

function imageUrl(part: ImagePart): string {
  return 'url' in part ? part.url : `data:${part.mediaType};base64,${part.data}`;
}

function userContent(content: string | Array<TextPart | ImagePart>): unknown {
  if (typeof content === 'string') return content;
  return content.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: { url: imageUrl(p) } },
  );
}

export function toOpenAIMessages(
  messages: Message[],
  dialect: OpenAIDialect,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let pendingImages: ImagePart[] = [];
  let sawReasoning = false;
  const flushImages = () => {
    // A tool message carries only text; its images follow as a user message.
    if (pendingImages.length > 0) out.push({ role: 'user', content: userContent(pendingImages) });
    pendingImages = [];
  };
  for (const msg of messages) {
    if (msg.role !== 'tool') flushImages();
    switch (msg.role) {
      case 'system':
        out.push({ role: 'system', content: msg.content });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(msg.content) });
        break;
      case 'assistant': {
        const parts =
          typeof msg.content === 'string'
            ? [{ type: 'text' as const, text: msg.content }]
            : msg.content;
        const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
        const reasoning = parts.flatMap((p) => (p.type === 'reasoning' ? [p.text] : [])).join('');
        const calls = msg.toolCalls ?? [];
        const m: Record<string, unknown> = {
          role: 'assistant',
          content: text === '' && calls.length > 0 ? null : text,
        };
        if (calls.length > 0)
          m.tool_calls = calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments || '{}' },
          }));
        if (replaysReasoning.has(dialect)) {
          sawReasoning ||= reasoning !== '';
          // Once a trace exists, these servers expect the field on every later assistant message.
          if (sawReasoning) m.reasoning_content = reasoning;
        }
        out.push(m);
        break;
      }
      case 'tool': {
        const parts =
          typeof msg.content === 'string'
            ? [{ type: 'text' as const, text: msg.content }]
            : msg.content;
        const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
        pendingImages.push(...parts.filter((p): p is ImagePart => p.type === 'image'));
        out.push({ role: 'tool', tool_call_id: msg.toolCallId, content: text });
        break;
      }
    }
  }
  flushImages();
  return out;
}

export function openaiAdapter(dialect: OpenAIDialect): WireAdapter {
  return {
    url(baseUrl) {
      const url = parseBaseUrl(baseUrl);
      // SDK convention: the base carries the version (…/v1, …/v1beta/openai). A bare origin gets /v1.
      const path = basePath(url);
      url.pathname = `${path === '' ? '/v1' : path}/chat/completions`;
      return url;
    },
    headers(apiKey, stream) {
      const h: Record<string, string> = {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        'user-agent': userAgent,
      };
      if (apiKey) h.authorization = `Bearer ${apiKey}`;
      return h;
    },
    body(req: ChatRequest, stream: boolean) {
      const body: Record<string, unknown> = {
        model: req.model,
        messages: toOpenAIMessages(req.messages, dialect),
        stream,
      };
      if (stream) body.stream_options = { include_usage: true };
      if (req.tools && req.tools.length > 0)
        body.tools = req.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        }));
      // OpenAI's reasoning models refuse max_tokens; most compatible servers only know max_tokens.
      if (req.maxTokens !== undefined)
        body[dialect === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = req.maxTokens;
      Object.assign(body, reasoningFields(dialect, req.reasoningEffort));
      return body;
    },
    parseStream: parseOpenAIStream,
    parseCompletion: parseOpenAICompletion,
  };
}
