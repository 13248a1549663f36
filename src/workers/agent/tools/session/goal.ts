import { z } from 'zod';
import type { Db } from '../../../../shared/store/db.js';
import { putGoal, type Goal } from '../../../../shared/store/goals.js';
import { defineTool } from '../registry.js';

/** Lets the model close its goal: complete when reached, blocked when it needs the user. */
export function goalTool(db: Db, onChange: (goal: Goal) => void) {
  return defineTool({
    name: 'update_goal',
    purpose: 'Marks the goal set for this chat as reached, or as blocked until you help.',
    description:
      'Marks the session goal as complete (it is reached) or blocked (you cannot continue without the user). Say why in note.',
    args: z
      .object({ status: z.enum(['complete', 'blocked']), note: z.string().max(2000).optional() })
      .strict(),
    run: ({ status, note }, ctx) => {
      const goal = putGoal(db, ctx.sessionId, { status });
      onChange(goal);
      return { output: `The goal is now ${status}.${note ? ` Note: ${note}` : ''}` };
    },
  });
}
