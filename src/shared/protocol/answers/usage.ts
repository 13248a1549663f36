import { z } from 'zod';
import { spendSchema } from '../answers.js';
import { budgetStateSchema } from '../budget-state.js';

/** The answers of /api/usage and /api/budgets. zod and node-free. */

export const usageGroups = ['day', 'model', 'session', 'origin'] as const;

/** One limit of `budgets:` in config.yml: US dollars, tokens, or both. */
const budgetLimitView = z.object({ usd: z.number().optional(), tokens: z.number().optional() });

/** The budgets as set, and what the overall ones (daily, monthly) have spent in their period. */
export const budgetsView = z.lazy(() =>
  z
    .object({
      limits: z.object({
        daily: budgetLimitView.optional(),
        monthly: budgetLimitView.optional(),
        session: budgetLimitView.optional(),
        cron_task: budgetLimitView.optional(),
        channel: budgetLimitView.optional(),
      }),
      /** The share of a limit at which a usage.warning event goes out. */
      warn_at: z.number(),
      states: z.array(budgetStateSchema),
    })
    .meta({ id: 'Budgets' }),
);

export const usageView = z.lazy(() =>
  z.object({
    from: z.string(),
    to: z.string(),
    group_by: z.enum(usageGroups),
    /** One row per group (a day, a model, a session id or "" for none, an origin), in key order. */
    items: z.array(spendSchema.unwrap().extend({ key: z.string() })),
    next_cursor: z.string().nullable(),
    totals: spendSchema,
    budgets: budgetsView,
  }),
);
