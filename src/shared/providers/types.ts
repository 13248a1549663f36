/**
 * Provider-neutral shapes: what the agent asks a model, and what comes back. The adapters
 * (openai.ts, anthropic.ts) translate these to and from each wire protocol.
 */

export type ReasoningEffort = 'off' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image, inline (base64 `data` with its media type) or by URL. */
export type ImagePart =
  | {
      type: 'image';
      mediaType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
      data: string;
    }
  | { type: 'image'; url: string };

/**
 * Reasoning the model produced. `signature` (Anthropic) must be sent back verbatim for the
 * reasoning to be accepted in later turns; `redacted` carries an encrypted block instead of text.
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  signature?: string;
  redacted?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model wrote them: a JSON text ("{}" when it sent none). */
  arguments: string;
}

export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<TextPart | ImagePart> }
  | { role: 'assistant'; content: string | Array<TextPart | ReasoningPart>; toolCalls?: ToolCall[] }
  | {
      role: 'tool';
      toolCallId: string;
      content: string | Array<TextPart | ImagePart>;
      isError?: boolean;
    };

export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON schema object describing the arguments. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  messages: Message[];
  tools?: ToolSpec[];
  maxTokens?: number;
  reasoningEffort?: ReasoningEffort;
  signal?: AbortSignal;
}

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'other';

/**
 * Token counts in disjoint buckets, so they add up: `input` is the prompt tokens neither read
 * from nor written to a cache. `output` includes `reasoning` when a provider reports both.
 */
export interface Usage {
  input: number;
  output: number;
  cachedInput: number;
  cacheWrite: number;
  reasoning?: number;
}

/**
 * What a stream yields, in order. Tool calls carry `index`: their position among the tool calls
 * of this reply (0, 1, ...), whatever numbering the wire used. `usage` comes once, right before
 * `done`, with the final totals; `done` is always the last event of a successful stream.
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** A reasoning block ended (Anthropic); its signature, when there is one, must be kept. */
  | { type: 'reasoning_end'; signature?: string }
  | { type: 'reasoning_redacted'; data: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'tool_call_end'; index: number; id: string; name: string; arguments: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; stopReason: StopReason; rawStopReason: string | null };

/** A whole reply: what `complete()` answers and what `collect()` builds from a stream. */
export interface Completion {
  text: string;
  /** All reasoning text joined, for display. */
  reasoning: string;
  /** The reasoning blocks as they must be sent back (signatures kept). */
  reasoningParts: ReasoningPart[];
  toolCalls: ToolCall[];
  /** What the provider reported; null when it reported nothing (never guessed). */
  usage: Usage | null;
  stopReason: StopReason;
  rawStopReason: string | null;
}

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cachedInput: 0, cacheWrite: 0 });
