import { lazyEntries } from './lazy.js';
import { z } from 'zod';
import { budgetStateSchema } from './budget-state.js';

const ack = z.object({});
const taskId = z.string().min(1).max(64);

/** The request types of scheduled tasks; ipc.ts spreads them into its table. */
export const cronRequestMakers = {
  /** gateway → supervisor: a cron task changed in the store; start or stop the cron worker, and have it reload the task. */
  'cron.changed': () => ({ payload: z.object({ id: taskId }), result: ack }),
  /** supervisor → cron worker: read this task from the store again (schedule, enabled, gone). */
  'cron.reload': () => ({ payload: z.object({ id: taskId }), result: ack }),
  /** gateway → cron worker (started on demand): run a task now. conflict while one of its runs is going. */
  'cron.run': () => ({
    payload: z.object({ id: taskId }),
    result: z.object({ run_id: z.string(), session_id: z.string() }),
  }),
  /** cron worker → supervisor: a run ended; stop the worker if nothing wants it any more. */
  'cron.idle': () => ({ payload: z.object({}), result: ack }),
} as const;
export const cronRequestDefs = lazyEntries(cronRequestMakers);

export const cronEventMakers = {
  /** agent → supervisor → cron worker: an approval of a cron turn was asked, answered, or denied on its timeout. */
  'cron.approval': () =>
    z.object({
      session_id: z.string(),
      turn_id: z.string(),
      approval_id: z.string(),
      tool: z.string(),
      reason: z.string(),
      state: z.enum(['asked', 'answered', 'expired']),
      decision: z.string().nullable(),
      why: z.string().nullable(),
    }),
  /**
   * agent → supervisor → cron worker: a budget reached its warning share (the usage.warning /ws
   * event); the worker tells the notify targets of the schedules. No cron worker: no schedule.
   */
  'usage.warning': () => budgetStateSchema,
} as const;
export const cronEventDefs = lazyEntries(cronEventMakers);
