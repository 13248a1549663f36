import { z } from 'zod';
import { budgetsObjectSchema, type Budgets } from '../../shared/config/budgets.js';
import { ApiError } from '../../shared/errors.js';
import { instant } from '../../shared/instant.js';
import { decodeCursor, encodeCursor } from '../../shared/store/util.js';
import { usageByGroup, usageGroups, usageTotals } from '../../shared/store/usage.js';
import { limitStates, type LimitState } from '../../shared/usage/budgets.js';
import { budgetsView as budgetsAnswer, usageView } from '../../shared/protocol/answers/usage.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';
import { badCursor, pageQuery } from './sessions/sessions.js';

const usageQuery = pageQuery.extend({
  from: instant('from').optional(),
  to: instant('to').optional(),
  group_by: z
    .enum(usageGroups, { error: `group_by must be one of ${usageGroups.join(', ')}` })
    .default('day'),
});

/** The limits that apply to everything (daily, monthly): the totals set against them. */
function overallStates(deps: Deps): LimitState[] {
  return limitStates(deps.db, deps.config().budgets, {
    sessionId: null,
    cronTask: null,
    channel: null,
  });
}

/** The budgets as set, and the overall ones' spending now. */
function budgetsView(deps: Deps) {
  const { warn_at, ...limits } = deps.config().budgets;
  return { limits, warn_at, states: overallStates(deps) };
}

/** Spending: recorded model calls grouped over time, and the budgets that limit them. */
export function usageRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/usage',
      summary:
        'What model calls used and cost in [from, to) (dates or ISO times; default: this UTC month so far), grouped by day, model, session or origin (group_by, default day), a page at a time (limit 1-200, cursor). Tokens a provider did not report are not guessed: those calls are counted in unknown_calls; calls without a known price in unpriced_calls. Also the totals and each overall budget (daily, monthly) with what it has spent.',
      query: usageQuery,
      response: usageView,
      handler: ({ query: q }) => {
        const now = new Date();
        const from =
          q.from ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
        const to = q.to ?? new Date(now.getTime() + 1000).toISOString();
        if (from >= to)
          throw new ApiError('invalid_request', 'from must be earlier than to.', [
            { path: 'from', message: 'not before to' },
          ]);
        let offset = 0;
        if (q.cursor !== undefined) {
          const c = decodeCursor(q.cursor);
          if (typeof c !== 'number' || !Number.isInteger(c) || c < 0) throw badCursor();
          offset = c;
        }
        const rows = usageByGroup(deps.db, {
          from,
          to,
          group: q.group_by,
          offset,
          limit: q.limit + 1,
        });
        const more = rows.length > q.limit;
        return {
          body: {
            from,
            to,
            group_by: q.group_by,
            items: rows.slice(0, q.limit),
            next_cursor: more ? encodeCursor(offset + q.limit) : null,
            totals: usageTotals(deps.db, from, to),
            budgets: budgetsView(deps),
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/budgets',
      summary:
        'The spending limits (budgets: in config.yml) and what the daily and monthly ones have spent in their period, with when each resets.',
      response: budgetsAnswer,
      handler: () => ({ body: budgetsView(deps) }),
    }),
    route({
      method: 'PUT',
      path: '/api/budgets',
      summary:
        'Replaces the spending limits: daily, monthly (everything), session (each session, over its life), cron_task and channel (each, per UTC day), each {usd, tokens}; warn_at (0-1, default 0.8). Omitted limits are removed. A raised limit lets the next turn run.',
      body: budgetsObjectSchema,
      response: budgetsAnswer,
      handler: async ({ body }) => {
        await deps.endpoint.request('config.budgets.set', { budgets: withoutDefaults(body) });
        return { body: budgetsView(deps) };
      },
    }),
  ];
}

/** warn_at at its default is left out of config.yml, as a user would write it. */
function withoutDefaults(b: Budgets): Partial<Budgets> {
  const { warn_at, ...rest } = b;
  return warn_at === 0.8 ? rest : { ...rest, warn_at };
}
