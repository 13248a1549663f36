import { z } from 'zod';
import { goalSummary } from '../../../shared/event-summaries.js';
import { ApiError } from '../../../shared/errors.js';
import { clearGoal, getGoal, goalStatuses, putGoal } from '../../../shared/store/goals.js';
import { requireSession } from '../../../shared/store/sessions.js';
import type { Deps } from '../../deps.js';
import { goalCleared } from '../../../shared/protocol/answers.js';
import { goalSchema } from '../../../shared/protocol/events.js';
import { route, type Route } from '../../route.js';

const OBJECTIVE_MAX = 4000;

// Usage counters are the server's: PUT cannot set them (strict rejects the field).
const putBody = z
  .strictObject({
    objective: z
      .string()
      .trim()
      .min(1, 'the objective must not be empty')
      .refine(
        (s) => [...s].length <= OBJECTIVE_MAX,
        `the objective is at most ${OBJECTIVE_MAX} characters`,
      ),
    status: z.enum(goalStatuses),
    token_budget: z
      .number()
      .int('token_budget must be a whole number')
      .positive('token_budget must be positive')
      .max(Number.MAX_SAFE_INTEGER)
      .nullable(),
    replace: z.boolean(),
  })
  .partial()
  .refine(
    (b) => b.objective !== undefined || b.status !== undefined || b.token_budget !== undefined,
    'send at least one of: objective, status, token_budget',
  );

function noGoal(id: string): ApiError {
  return new ApiError(
    'not_found',
    `Session ${id} has no goal; set one with PUT /api/sessions/${id}/goal {"objective": "..."}.`,
  );
}

/** A session's goal: one at most, with usage counters the server keeps. */
export function goalRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/sessions/:id/goal',
      summary: "The session's goal; 404 when it has none.",
      response: goalSchema,
      handler: ({ params }) => {
        const s = requireSession(deps.db, params.id);
        const goal = getGoal(deps.db, s.id);
        if (!goal) throw noGoal(s.id);
        return { body: goal };
      },
    }),
    route({
      method: 'PUT',
      path: '/api/sessions/:id/goal',
      summary:
        'Sets the goal (objective needed when there is none, or with replace: true to start over with fresh usage) or edits it: objective, status active|paused|complete|blocked|budget_limited, token_budget (positive, or null for none). 201 when created.',
      body: putBody,
      response: goalSchema,
      others: { 201: { description: 'Created: the session had no goal', schema: goalSchema } },
      handler: ({ params, body }) => {
        const s = requireSession(deps.db, params.id);
        const created = body.replace === true || getGoal(deps.db, s.id) === undefined;
        const goal = putGoal(deps.db, s.id, body);
        deps.publish(`session:${s.id}`, 'goal.updated', goalSummary(goal));
        return { status: created ? 201 : 200, body: goal };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/sessions/:id/goal',
      summary: "Clears the session's goal; 404 when it has none.",
      response: goalCleared,
      handler: ({ params }) => {
        const s = requireSession(deps.db, params.id);
        if (!clearGoal(deps.db, s.id)) throw noGoal(s.id);
        deps.publish(`session:${s.id}`, 'goal.cleared', { session_id: s.id });
        return { body: { cleared: true as const, session_id: s.id } };
      },
    }),
  ];
}
