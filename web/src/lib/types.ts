import type {
  GoalView,
  MessageSummary,
  SessionView,
  TrashItemView,
  WsEventData,
} from '../../../src/shared/protocol/events';
import type { ContentByRole } from '../../../src/shared/protocol/message-content';

/** The server's own types, from the /ws event catalogue (type-only: nothing of it is bundled). */
export type Session = SessionView;

export interface Attachment {
  name: string;
  mime?: string;
  size?: number;
  original_name?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A stored message: its content's shape follows its role (the server's own types). Partial,
 * because a /ws event may carry it cut to its scalar fields (`truncated`).
 */
export type Message = {
  [R in keyof ContentByRole]: {
    id: string;
    seq: number;
    role: R;
    content: Partial<ContentByRole[R]> | undefined;
    created_at?: string;
    /** A /ws event carried it cut: GET /api/sessions/{id}/messages/{id} has it whole. */
    truncated?: true;
  };
}[keyof ContentByRole];

/** A message of one role: `MessageOf<'tool'>`. */
export type MessageOf<R extends Message['role']> = Extract<Message, { role: R }>;

/**
 * A message as an event carries it. The catalogue leaves `content` unchecked (a cut summary may
 * lack any field); the agent wrote it through the content schemas of its role, so it is read as
 * that role's shape, every field optional.
 */
export function messageOf(m: MessageSummary): Message {
  return m as Message;
}

export type Goal = GoalView;

/** Tokens and turns a goal used so far. */
export function goalUsage(g: Goal): { tokens: number; turns: number } {
  return { tokens: g.usage.input_tokens + g.usage.output_tokens, turns: g.usage.turns };
}

/** A tool call waiting for the user: as approval.requested carries it, or GET /api/sessions/{id}/approvals lists it. */
export type Approval = Omit<WsEventData<'approval.requested'>, 'call_id' | 'turn_id'> & {
  call_id?: string;
  turn_id?: string;
};

export interface ModelEntry {
  id: string;
  provider: string;
  model: string;
  protocol: string;
  base_url: string | null;
  api_key_set: boolean;
  api_key_source: string | null;
  context_window: number | null;
  max_output_tokens: number | null;
  slots: string[];
  /** What its calls are charged at: the entry's own prices (`config`), svc's shipped ones, or none. */
  prices: Prices | null;
  prices_source: 'config' | 'builtin' | null;
  prices_taken: string | null;
}

/** US dollars per million tokens. */
export interface Prices {
  input: number;
  cached_input?: number;
  cache_write?: number;
  output: number;
}

export interface Provider {
  id: string;
  name: string;
  protocol: string;
  base_url: string | null;
  base_url_variants: { label: string; base_url: string }[];
  key_env: string | null;
  key_required: boolean;
  protocol_choosable: boolean;
  models: { id: string; vision: boolean }[];
  website?: string;
  /** svc's shipped prices of this provider's well-known models, by model name, as listed on prices_taken. */
  prices?: Record<string, Prices>;
  prices_taken?: string;
}

export interface OnboardStatus {
  state: 'no_model' | 'model_configured' | 'model_tested' | 'profile_written' | 'done';
  steps: {
    model_configured: boolean;
    model_tested: boolean;
    profile_written: boolean;
    completed: boolean;
  };
  default_model: string | null;
  last_test: { ok: boolean; at: string; reason?: string } | null;
  can_complete: boolean;
  next: string;
}

export interface TestResult {
  ok: boolean;
  reason?: string;
  message?: string;
  latency_ms?: number;
}

export type TrashItem = TrashItemView;
