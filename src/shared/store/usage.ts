import { usageGroups } from '../protocol/answers/usage.js';
import type { Db } from './db.js';
import { newId, stmt } from './util.js';

/** Where a model call came from: the turn's origin, or the side job it served. */
export const usageOrigins = [
  'chat',
  'channel',
  'cron',
  'workflow',
  'goal',
  'compaction',
  'titling',
  'embedding',
] as const;
export type UsageOrigin = (typeof usageOrigins)[number];

/** Token counts as the provider reported them; null when it reported none. */
export interface ReportedTokens {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  /** Reported by OpenAI-protocol servers (part of output); null when not reported. */
  reasoning: number | null;
}

export interface UsageRecordInput {
  at: string;
  session_id: string | null;
  turn_id: string | null;
  model_id: string | null;
  provider: string;
  model: string;
  origin: UsageOrigin;
  channel: string | null;
  cron_task: string | null;
  workflow_run: string | null;
  status: 'ok' | 'error' | 'interrupted';
  streamed: boolean;
  tokens: ReportedTokens | null;
  estimated_tokens: number;
  /** US dollars, computed when recorded; null without a price or without reported tokens. */
  cost_usd: number | null;
  latency_ms: number;
}

export function insertUsage(db: Db, r: UsageRecordInput): string {
  const id = newId('use');
  stmt(
    db,
    `INSERT INTO usage_records (id, at, session_id, turn_id, model_id, provider, model, origin, channel,
      cron_task, workflow_run, status, streamed, input_tokens, cached_input_tokens, cache_write_tokens,
      output_tokens, reasoning_tokens, estimated_tokens, cost_usd, latency_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    r.at,
    r.session_id,
    r.turn_id,
    r.model_id,
    r.provider,
    r.model,
    r.origin,
    r.channel,
    r.cron_task,
    r.workflow_run,
    r.status,
    r.streamed ? 1 : 0,
    r.tokens?.input ?? null,
    r.tokens?.cachedInput ?? null,
    r.tokens?.cacheWrite ?? null,
    r.tokens?.output ?? null,
    r.tokens?.reasoning ?? null,
    r.estimated_tokens,
    r.cost_usd,
    Math.round(r.latency_ms),
  );
  addToTotals(db, r);
  return id;
}

/** The tokens a record counts against a budget (as COUNTED_TOKENS reads them). */
function countedTokens(r: UsageRecordInput): number {
  if (r.tokens)
    return r.tokens.input + r.tokens.cachedInput + r.tokens.cacheWrite + r.tokens.output;
  return r.status === 'error' ? 0 : r.estimated_tokens;
}

/** Keeps usage_totals (what budgets read) in step with the record, in its transaction. */
function addToTotals(db: Db, r: UsageRecordInput): void {
  const day = r.at.slice(0, 10);
  const keys: Array<[string, string]> = [
    ['all', day],
    ['all', r.at.slice(0, 7)],
  ];
  if (r.session_id) keys.push([`session:${r.session_id}`, 'life']);
  if (r.cron_task) keys.push([`cron_task:${r.cron_task}`, day]);
  if (r.channel) keys.push([`channel:${r.channel}`, day]);
  const tokens = countedTokens(r);
  const usd = r.cost_usd ?? 0;
  const upsert = stmt(
    db,
    `INSERT INTO usage_totals (key, period, tokens, usd) VALUES (?, ?, ?, ?)
     ON CONFLICT (key, period) DO UPDATE SET tokens = tokens + excluded.tokens, usd = usd + excluded.usd`,
  );
  for (const [key, period] of keys) upsert.run(key, period, tokens, usd);
}

export type SpendScope =
  | { kind: 'all' }
  | { kind: 'session'; id: string }
  | { kind: 'cron_task'; id: string }
  | { kind: 'channel'; id: string };

export interface Spent {
  tokens: number;
  usd: number;
}

/**
 * What a scope spent in a period (`YYYY-MM-DD`, `YYYY-MM`, or `life` for a session), counted as
 * budgets count: reported tokens, else the call's pre-call estimate (a call whose usage is unknown
 * still spent something) unless it failed without a report (most never reached the model).
 */
export function spentIn(db: Db, scope: SpendScope, period: string): Spent {
  const key = scope.kind === 'all' ? 'all' : `${scope.kind}:${scope.id}`;
  const r = stmt<[string, string], Spent>(
    db,
    'SELECT tokens, usd FROM usage_totals WHERE key = ? AND period = ?',
  ).get(key, period);
  return r ?? { tokens: 0, usd: 0 };
}

/** Records that a warning for this limit and period went out; false when one already had. */
export function claimWarning(db: Db, limitKey: string, period: string): boolean {
  return (
    stmt(
      db,
      'INSERT OR IGNORE INTO usage_warnings (limit_key, period, sent_at) VALUES (?, ?, ?)',
    ).run(limitKey, period, new Date().toISOString()).changes > 0
  );
}

export interface UsageTotals {
  calls: number;
  /** Calls whose provider reported no usage (their tokens are not in the sums below). */
  unknown_calls: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
  /** Calls with reported tokens but no known price (their cost is not in cost_usd). */
  unpriced_calls: number;
}

const TOTALS = `COUNT(*) AS calls,
  SUM(CASE WHEN input_tokens IS NULL THEN 1 ELSE 0 END) AS unknown_calls,
  COALESCE(SUM(input_tokens), 0) AS input_tokens,
  COALESCE(SUM(cached_input_tokens), 0) AS cached_input_tokens,
  COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
  COALESCE(SUM(output_tokens), 0) AS output_tokens,
  COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
  TOTAL(cost_usd) AS cost_usd,
  SUM(CASE WHEN input_tokens IS NOT NULL AND cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced_calls`;

const zeroTotals = (): UsageTotals => ({
  calls: 0,
  unknown_calls: 0,
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_write_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0,
  unpriced_calls: 0,
});

/** A session's spending, deleted or not. */
export function sessionUsage(db: Db, sessionId: string): UsageTotals {
  const r = stmt<[string], UsageTotals>(
    db,
    `SELECT ${TOTALS} FROM usage_records WHERE session_id = ?`,
  ).get(sessionId);
  return r && r.calls > 0 ? r : zeroTotals();
}

/** A turn's spending. */
export function turnUsage(db: Db, turnId: string): UsageTotals {
  const r = stmt<[string], UsageTotals>(
    db,
    `SELECT ${TOTALS} FROM usage_records WHERE turn_id = ?`,
  ).get(turnId);
  return r && r.calls > 0 ? r : zeroTotals();
}

export { usageGroups };
export type UsageGroup = (typeof usageGroups)[number];

const groupKey: Record<UsageGroup, string> = {
  day: 'substr(at, 1, 10)',
  model: "COALESCE(model_id, provider || '/' || model)",
  session: "COALESCE(session_id, '')",
  origin: 'origin',
};

/** Totals in [from, to), one row per group, in key order; `offset`/`limit` page them. */
export function usageByGroup(
  db: Db,
  q: { from: string; to: string; group: UsageGroup; offset: number; limit: number },
): Array<UsageTotals & { key: string }> {
  const key = groupKey[q.group];
  return stmt<[string, string, number, number], UsageTotals & { key: string }>(
    db,
    `SELECT ${key} AS key, ${TOTALS} FROM usage_records WHERE at >= ? AND at < ?
     GROUP BY key ORDER BY key LIMIT ? OFFSET ?`,
  ).all(q.from, q.to, q.limit, q.offset);
}

/** Totals in [from, to). */
export function usageTotals(db: Db, from: string, to: string): UsageTotals {
  const r = stmt<[string, string], UsageTotals>(
    db,
    `SELECT ${TOTALS} FROM usage_records WHERE at >= ? AND at < ?`,
  ).get(from, to);
  return r && r.calls > 0 ? r : zeroTotals();
}

/** The scheduled task whose run is using this session now, if any (its turns count against it). */
export function cronTaskOfSession(db: Db, sessionId: string): string | null {
  const r = stmt<[string], { task_id: string }>(
    db,
    "SELECT task_id FROM cron_runs WHERE session_id = ? AND status = 'running' ORDER BY started_at DESC LIMIT 1",
  ).get(sessionId);
  return r?.task_id ?? null;
}
