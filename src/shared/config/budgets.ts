import { z } from 'zod';

/**
 * `budgets:` in config.yml: hard spending limits, checked before every model call. Each limit is
 * in US dollars (`usd`, counts only calls whose model has a price), in tokens (`tokens`: input,
 * cached, cache-written and output together), or both. Periods are calendar days and months in
 * UTC; a session's limit covers its whole life; a cron task's and a channel's are per UTC day.
 */
export const budgetLimitSchema = z
  .object({
    usd: z.number().positive().max(1_000_000).optional(),
    tokens: z.number().int().positive().max(1e12).optional(),
  })
  .strict()
  .refine((l) => l.usd !== undefined || l.tokens !== undefined, {
    message: 'a limit needs usd, tokens or both',
  });
export type BudgetLimit = z.infer<typeof budgetLimitSchema>;

export const budgetScopes = ['daily', 'monthly', 'session', 'cron_task', 'channel'] as const;
export type BudgetScope = (typeof budgetScopes)[number];

export const budgetsObjectSchema = z
  .object({
    /** Everything svc spends in a UTC day. */
    daily: budgetLimitSchema.optional(),
    /** Everything svc spends in a UTC calendar month. */
    monthly: budgetLimitSchema.optional(),
    /** One session over its whole life. */
    session: budgetLimitSchema.optional(),
    /** Each scheduled task, per UTC day. */
    cron_task: budgetLimitSchema.optional(),
    /** Each messaging platform (telegram, slack, ...), per UTC day. */
    channel: budgetLimitSchema.optional(),
    /** The share of a limit at which a usage.warning event goes out (once per limit and period). */
    warn_at: z.number().gt(0).lt(1).default(0.8),
  })
  .strict();
export const budgetsSchema = budgetsObjectSchema.prefault({});
export type Budgets = z.infer<typeof budgetsSchema>;
