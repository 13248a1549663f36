import type { BudgetScope, Budgets } from '../config/budgets.js';
import type { Db } from '../store/db.js';
import { claimWarning, spentIn, type SpendScope } from '../store/usage.js';

/**
 * Budgets against what was recorded: which limits apply to a call, how much of each is spent,
 * whether a call could cross one (checked before the call is made), and the warnings at
 * `warn_at`. Shared: the agent checks before each call, the gateway shows the same numbers.
 */

/** What a call belongs to, for the limits scoped to a session, a cron task or a channel. */
export interface CallScope {
  sessionId: string | null;
  cronTask: string | null;
  channel: string | null;
}

export interface LimitState {
  scope: BudgetScope;
  /** Stable name of this limit: `daily`, `session:<id>`, `cron_task:<id>`, `channel:<platform>`. */
  key: string;
  unit: 'usd' | 'tokens';
  limit: number;
  spent: number;
  /** The period this spending is counted in: a UTC day, a month, or `life` (a session). */
  period: string;
  /** When the period ends and spending starts again from zero; null: never (a session). */
  resets_at: string | null;
}

interface Period {
  from: string;
  period: string;
  resets_at: string | null;
}

function dayOf(now: Date): Period {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const next = new Date(from.getTime() + 86_400_000);
  return {
    from: from.toISOString(),
    period: from.toISOString().slice(0, 10),
    resets_at: next.toISOString(),
  };
}

function monthOf(now: Date): Period {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return {
    from: from.toISOString(),
    period: from.toISOString().slice(0, 7),
    resets_at: next.toISOString(),
  };
}

const life: Period = { from: '', period: 'life', resets_at: null };

/** Every configured limit that applies to a call of this scope, with what it has spent. */
export function limitStates(
  db: Db,
  budgets: Budgets,
  call: CallScope,
  now = new Date(),
): LimitState[] {
  const wanted: Array<{ scope: BudgetScope; key: string; spend: SpendScope; period: Period }> = [];
  if (budgets.daily)
    wanted.push({ scope: 'daily', key: 'daily', spend: { kind: 'all' }, period: dayOf(now) });
  if (budgets.monthly)
    wanted.push({ scope: 'monthly', key: 'monthly', spend: { kind: 'all' }, period: monthOf(now) });
  if (budgets.session && call.sessionId)
    wanted.push({
      scope: 'session',
      key: `session:${call.sessionId}`,
      spend: { kind: 'session', id: call.sessionId },
      period: life,
    });
  if (budgets.cron_task && call.cronTask)
    wanted.push({
      scope: 'cron_task',
      key: `cron_task:${call.cronTask}`,
      spend: { kind: 'cron_task', id: call.cronTask },
      period: dayOf(now),
    });
  if (budgets.channel && call.channel)
    wanted.push({
      scope: 'channel',
      key: `channel:${call.channel}`,
      spend: { kind: 'channel', id: call.channel },
      period: dayOf(now),
    });
  const out: LimitState[] = [];
  for (const w of wanted) {
    const limit = budgets[w.scope];
    if (!limit) continue;
    const spent = spentIn(db, w.spend, w.period.period);
    const base = {
      scope: w.scope,
      key: w.key,
      period: w.period.period,
      resets_at: w.period.resets_at,
    };
    if (limit.usd !== undefined)
      out.push({ ...base, unit: 'usd', limit: limit.usd, spent: spent.usd });
    if (limit.tokens !== undefined)
      out.push({ ...base, unit: 'tokens', limit: limit.tokens, spent: spent.tokens });
  }
  return out;
}

/** The most a call may spend: input estimated from its characters, plus its output cap. */
export interface CallEstimate {
  tokens: number;
  /** null when the model has no price: dollar limits cannot count it. */
  usd: number | null;
}

/** Why a call is not made: the limit it could cross, with numbers a person can act on. */
export interface BudgetRefusal {
  scope: BudgetScope;
  key: string;
  unit: 'usd' | 'tokens';
  limit: number;
  spent: number;
  estimate: number;
  resets_at: string | null;
  message: string;
}

export function formatAmount(unit: 'usd' | 'tokens', n: number): string {
  if (unit === 'tokens') return `${Math.round(n).toLocaleString('en-US')} tokens`;
  return `$${n < 0.01 && n > 0 ? n.toPrecision(2) : n.toFixed(2)}`;
}

const scopeNames: Record<BudgetScope, string> = {
  daily: 'daily budget',
  monthly: 'monthly budget',
  session: "session's budget",
  cron_task: "scheduled task's daily budget",
  channel: "channel's daily budget",
};

/**
 * A warning in a sentence, for a person reading it away from svc (a schedule's notify target):
 * which limit, what it has spent of it, and when it resets. `subject` names what the limit is
 * on when the key alone would not say it well (a scheduled task's name).
 */
export function warningText(s: LimitState, subject?: string): string {
  const of =
    subject ??
    (s.scope === 'session'
      ? `session ${s.key.slice('session:'.length)}`
      : s.scope === 'channel'
        ? s.key.slice('channel:'.length)
        : s.scope === 'cron_task'
          ? `task ${s.key.slice('cron_task:'.length)}`
          : undefined);
  const share = Math.floor((s.spent / s.limit) * 100);
  const resets = s.resets_at
    ? `It resets at ${s.resets_at}.`
    : 'It never resets (it covers the whole session).';
  return (
    `The ${scopeNames[s.scope]}${of ? ` of ${of}` : ''} (budgets.${s.scope}: ${formatAmount(s.unit, s.limit)}) ` +
    `has spent ${formatAmount(s.unit, s.spent)}, ${share} % of it; past it, model calls are refused. ${resets}`
  );
}

/** The first limit the call could cross, or null when it fits every one. */
export function checkCall(states: LimitState[], estimate: CallEstimate): BudgetRefusal | null {
  for (const s of states) {
    const add = s.unit === 'usd' ? estimate.usd : estimate.tokens;
    if (add === null) continue;
    if (s.spent + add <= s.limit) continue;
    const resets = s.resets_at
      ? `It resets at ${s.resets_at}.`
      : 'It never resets (it covers the whole session).';
    return {
      scope: s.scope,
      key: s.key,
      unit: s.unit,
      limit: s.limit,
      spent: s.spent,
      estimate: add,
      resets_at: s.resets_at,
      message:
        `The ${scopeNames[s.scope]} (budgets.${s.scope}: ${formatAmount(s.unit, s.limit)}) would be exceeded: ` +
        `${formatAmount(s.unit, s.spent)} spent, and the next model call could use up to ${formatAmount(s.unit, add)} ` +
        `(its input estimated as characters / 4, plus its output cap), so it was not made. ${resets} ` +
        'Raise the limit (PUT /api/budgets or budgets: in config.yml) to go on.',
    };
  }
  return null;
}

/** The limits that reached `warnAt` and have not warned in this period yet (claimed now). */
export function dueWarnings(db: Db, states: LimitState[], warnAt: number): LimitState[] {
  return states.filter(
    (s) => s.spent >= s.limit * warnAt && claimWarning(db, `${s.key}:${s.unit}`, s.period),
  );
}
