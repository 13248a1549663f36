import type { MessageSummary, WsEventData } from '../../../src/shared/protocol/events';
import type { ContentByRole } from '../../../src/shared/protocol/message-content';
import type { components } from './api-schema';

/**
 * The API's named types, as the OpenAPI document declares them (web/src/lib/api-schema.d.ts,
 * generated); the answers of single routes are `Answer<method, path>` (./api). Types only:
 * nothing of them is bundled.
 */
export type Schemas = components['schemas'];

export type Session = Schemas['Session'];
/** A file a chat's tools wrote. */
export type Artifact = Schemas['Artifact'];

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
export function messageOf(m: MessageSummary | Schemas['Message']): Message {
  return m as Message;
}

export type Goal = Schemas['Goal'];
/** What a session's or a turn's model calls used and cost. */
export type Spend = Schemas['Spend'];

/** Tokens and turns a goal used so far. */
export function goalUsage(g: Goal): { tokens: number; turns: number } {
  return { tokens: g.usage.input_tokens + g.usage.output_tokens, turns: g.usage.turns };
}

/** A tool call waiting for the user: as approval.requested carries it, or GET /api/sessions/{id}/approvals lists it. */
export type Approval = Omit<WsEventData<'approval.requested'>, 'call_id' | 'turn_id'> & {
  call_id?: string;
  turn_id?: string;
};

export type ModelEntry = Schemas['ModelEntry'];
/** US dollars per million tokens. */
export type Prices = Schemas['Prices'];
export type Provider = Schemas['Provider'];
export type OnboardStatus = Schemas['OnboardStatus'];
/**
 * A model test's answer; or a failure the Web UI words itself: the test request failed
 * (request_failed), or the reason onboarding remembers from the last test.
 */
export type TestResult =
  | Schemas['ModelTestResult']
  | { ok: false; reason?: string; message?: string; latency_ms?: undefined };

export type TrashItem = Schemas['TrashItem'];
