export interface Session {
  id: string;
  title: string;
  model_id: string | null;
  reasoning_effort: string;
  show_reasoning: boolean;
  permission_mode: string;
  working_dir: string | null;
  /** The sandbox network: "on", "off" or a host list; null follows permissions.yml. */
  network?: string | string[] | null;
  /** The messaging platform this chat lives on (telegram, messenger); null for others. */
  channel?: string | null;
  created_at: string;
  updated_at: string;
  message_count?: number;
}

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

export interface Message {
  id: string;
  seq: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: any;
  created_at?: string;
}

export interface Goal {
  objective: string;
  status: string;
  token_budget: number | null;
  usage?: { input_tokens: number; output_tokens: number; turns: number };
  input_tokens?: number;
  output_tokens?: number;
  turns?: number;
}

/** Tokens and turns a goal used so far (the counters may sit under `usage` or at the top). */
export function goalUsage(g: Goal): { tokens: number; turns: number } {
  const u = g.usage ?? g;
  return { tokens: (u.input_tokens ?? 0) + (u.output_tokens ?? 0), turns: u.turns ?? 0 };
}

export interface Approval {
  approval_id: string;
  call_id?: string;
  tool: string;
  input: unknown;
  reason: string;
  turn_id?: string;
  /** Once per session: the sandbox is off or unavailable, and how to fix it. */
  sandbox_notice?: string;
}

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
}

export interface OnboardStatus {
  state: 'no_model' | 'model_configured' | 'model_tested' | 'profile_written' | 'done';
  steps: { model_configured: boolean; model_tested: boolean; profile_written: boolean; completed: boolean };
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

export interface TrashItem {
  id: string;
  kind: string;
  name: string;
  original?: string;
  size_bytes: number;
  deleted_at: string;
  expires_at: string;
}
