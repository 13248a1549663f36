import { z } from 'zod';

/*
 * A budget's state, in its own file: the /ws event catalogue and the IPC protocol (a warning
 * passed on to the cron worker) both carry it, and the IPC side must not load the catalogue.
 */
export const budgetScopeSchema = z.enum(['daily', 'monthly', 'session', 'cron_task', 'channel']);
/** One limit of `budgets:` and what it has spent in its period (GET /api/usage lists them too). */
export const budgetStateSchema = z.object({
  scope: budgetScopeSchema,
  key: z.string(),
  unit: z.enum(['usd', 'tokens']),
  limit: z.number(),
  spent: z.number(),
  period: z.string(),
  resets_at: z.string().nullable(),
});
