import { z } from 'zod';
import { workflowErrorSchema, workflowSchema, type StepKind } from '../../workflows/format.js';

/**
 * The answers of /api/workflows (src/gateway/routes/workflows.ts); a run's schema is also the
 * store's (src/shared/workflows/runs.ts). zod and node-free, like answers.ts.
 */

export const workflowRunStatus = z.lazy(() =>
  z.enum(['queued', 'running', 'completed', 'failed', 'interrupted']),
);

export const workflowStepState = z.lazy(() =>
  z.object({
    /** skipped: a step after a failed one, which will not run. */
    status: z.enum(['running', 'completed', 'failed', 'skipped']),
    started_at: z.string(),
    ended_at: z.string().nullable(),
    /** The first characters of the step's output (the full output is in the session). */
    output: z.string().nullable(),
  }),
);

/** One run: its inputs, each step's state by step id, and why it failed. */
export const workflowRunSchema = z.lazy(() =>
  z
    .object({
      id: z.string(),
      workflow: z.string(),
      session_id: z.string(),
      status: workflowRunStatus,
      inputs: z.record(z.string(), z.unknown()),
      steps: z.record(z.string(), workflowStepState),
      error: z.string().nullable(),
      failed_step: z.string().nullable(),
      started_at: z.string(),
      ended_at: z.string().nullable(),
    })
    .meta({ id: 'WorkflowRun' }),
);

const stepKind = z.enum(['prompt', 'run', 'tool']) satisfies z.ZodType<StepKind>;

/** A workflow as GET /api/workflows lists it; an invalid file is listed with its error. */
export const workflowView = z.lazy(() =>
  z
    .object({
      name: z.string(),
      description: z.string(),
      source: z.enum(['builtin', 'user']),
      valid: z.boolean(),
      /** The error in words ("line 3, steps.0.run: …"), or null. */
      why: z.string().nullable(),
      error: workflowErrorSchema.nullable(),
      inputs: workflowSchema.shape.inputs,
      steps: z.array(
        z.object({
          id: z.string(),
          kind: stepKind,
          needs: z.array(z.string()),
          model: workflowSchema.shape.steps.element.shape.model,
        }),
      ),
      last_run: workflowRunSchema
        .unwrap()
        .pick({
          id: true,
          status: true,
          session_id: true,
          started_at: true,
          ended_at: true,
          failed_step: true,
          error: true,
        })
        .nullable(),
    })
    .meta({ id: 'Workflow' }),
);

export const workflowList = z.lazy(() => z.object({ items: z.array(workflowView) }));
/** One workflow with its recent runs, newest first. */
export const workflowDetail = z.lazy(() =>
  workflowView.unwrap().extend({ runs: z.array(workflowRunSchema) }),
);
/** A run started (202): its turn runs in a session of its own. */
export const workflowStarted = z.lazy(() =>
  z.object({
    run_id: z.string(),
    session_id: z.string(),
    turn_id: z.string(),
    workflow: z.string(),
  }),
);
