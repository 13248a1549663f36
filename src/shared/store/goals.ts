import { z } from 'zod';
import { StoreError } from '../errors.js';
import type { Db } from './db.js';
import { isoNow, stmt } from './util.js';

export const goalStatuses = ['active', 'paused', 'complete', 'blocked', 'budget_limited'] as const;
export type GoalStatus = (typeof goalStatuses)[number];

/** A session's goal (at most one) as the API shows it; usage is kept by the server. */
export interface Goal {
  session_id: string;
  objective: string;
  status: GoalStatus;
  token_budget: number | null;
  usage: { input_tokens: number; output_tokens: number; turns: number };
  created_at: string;
  updated_at: string;
}

export const goalRowSchema = z.object({
  session_id: z.string(),
  objective: z.string(),
  status: z.enum(goalStatuses),
  token_budget: z.number().int().nullable(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  turns: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GoalRow = z.infer<typeof goalRowSchema>;

const COLS =
  'session_id, objective, status, token_budget, input_tokens, output_tokens, turns, created_at, updated_at';

function toGoal(r: GoalRow): Goal {
  const { input_tokens, output_tokens, turns, ...rest } = r;
  return { ...rest, usage: { input_tokens, output_tokens, turns } };
}

export function getGoalRow(db: Db, sessionId: string): GoalRow | undefined {
  return stmt<[string], GoalRow>(db, `SELECT ${COLS} FROM goals WHERE session_id = ?`).get(
    sessionId,
  );
}

export function getGoal(db: Db, sessionId: string): Goal | undefined {
  const r = getGoalRow(db, sessionId);
  return r && toGoal(r);
}

export function insertGoalRow(db: Db, r: GoalRow): void {
  stmt(
    db,
    `INSERT INTO goals (${COLS}) VALUES (@session_id, @objective, @status, @token_budget, @input_tokens, @output_tokens, @turns, @created_at, @updated_at)`,
  ).run(r);
}

function writeGoalRow(db: Db, r: GoalRow): void {
  stmt(
    db,
    `INSERT OR REPLACE INTO goals (${COLS}) VALUES (@session_id, @objective, @status, @token_budget, @input_tokens, @output_tokens, @turns, @created_at, @updated_at)`,
  ).run(r);
}

export interface GoalInput {
  objective?: string;
  status?: GoalStatus;
  /** null removes the budget. */
  token_budget?: number | null;
  /** Start over: a new goal with fresh usage, even when one exists. */
  replace?: boolean;
}

/**
 * Sets or edits the session's goal. Editing keeps the usage counters; a new goal (none yet, or
 * `replace`) needs an objective and starts active. The caller has checked the session exists.
 */
export function putGoal(db: Db, sessionId: string, input: GoalInput): Goal {
  return db
    .transaction(() => {
      const cur = input.replace ? undefined : getGoalRow(db, sessionId);
      const now = isoNow();
      if (!cur && input.objective === undefined) {
        throw new StoreError(
          'invalid',
          'objective: required to start a goal (the session has none yet, or replace is true).',
          [{ path: 'objective', message: 'required when the session has no goal' }],
        );
      }
      const next: GoalRow = cur
        ? {
            ...cur,
            objective: input.objective ?? cur.objective,
            status: input.status ?? cur.status,
            token_budget: input.token_budget === undefined ? cur.token_budget : input.token_budget,
            updated_at: now,
          }
        : {
            session_id: sessionId,
            objective: input.objective!,
            status: input.status ?? 'active',
            token_budget: input.token_budget ?? null,
            input_tokens: 0,
            output_tokens: 0,
            turns: 0,
            created_at: now,
            updated_at: now,
          };
      writeGoalRow(db, next);
      return toGoal(next);
    })
    .immediate();
}

/** Removes the goal; false when there was none. */
export function clearGoal(db: Db, sessionId: string): boolean {
  return stmt(db, 'DELETE FROM goals WHERE session_id = ?').run(sessionId).changes > 0;
}

/**
 * Adds a turn's usage to the session's goal, if it has one; an active goal whose input + output
 * tokens reach its budget becomes budget_limited. Returns the goal after the change.
 */
export function addGoalUsage(
  db: Db,
  sessionId: string,
  usage: { input_tokens?: number; output_tokens?: number; turns?: number },
): Goal | undefined {
  return db
    .transaction(() => {
      const cur = getGoalRow(db, sessionId);
      if (!cur) return undefined;
      const next: GoalRow = {
        ...cur,
        input_tokens: cur.input_tokens + (usage.input_tokens ?? 0),
        output_tokens: cur.output_tokens + (usage.output_tokens ?? 0),
        turns: cur.turns + (usage.turns ?? 0),
        updated_at: isoNow(),
      };
      if (
        next.status === 'active' &&
        next.token_budget !== null &&
        next.input_tokens + next.output_tokens >= next.token_budget
      )
        next.status = 'budget_limited';
      writeGoalRow(db, next);
      return toGoal(next);
    })
    .immediate();
}
