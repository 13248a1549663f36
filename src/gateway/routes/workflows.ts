import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { findWorkflow, loadWorkflows, workflowView } from '../../shared/workflows/catalog.js';
import { getRun, listRuns } from '../../shared/workflows/runs.js';
import { runInputsSchema, startRun } from '../../shared/workflows/start.js';
import type { Deps } from '../deps.js';
import {
  workflowDetail,
  workflowList,
  workflowRunSchema,
  workflowStarted,
} from '../../shared/protocol/answers/workflows.js';
import { route, type Route } from '../route.js';

const runBody = z.strictObject({ inputs: runInputsSchema.default({}) });

/** Workflows: listed (spec), read, and run by a script or the Web UI. Run events go to the `workflows` topic. */
export function workflowRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/workflows',
      summary:
        'Every workflow: {items: [{name, description, source: builtin|user, valid, why, error: {line, field, message}, inputs, steps, last_run}]}. An invalid file is listed with its error, never skipped.',
      response: workflowList,
      handler: () => ({
        body: { items: loadWorkflows(deps.paths).map((w) => workflowView(deps.db, w)) },
      }),
    }),
    route({
      method: 'GET',
      path: '/api/workflows/:name',
      summary: 'One workflow with its recent runs (newest first, each with its steps).',
      response: workflowDetail,
      handler: ({ params }) => {
        const w = findWorkflow(deps.paths, params.name);
        if (!w)
          throw new ApiError(
            'not_found',
            `There is no workflow named ${JSON.stringify(params.name)}; GET /api/workflows lists them.`,
          );
        return { body: { ...workflowView(deps.db, w), runs: listRuns(deps.db, w.name, 20) } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/workflows/:name/run',
      summary:
        'Starts a run with {"inputs": {...}}: 202 {run_id, session_id, turn_id}. The run is a session of its own; progress on the `workflows` topic. A missing or unknown input is a 400 naming it; an invalid workflow is 409.',
      body: runBody,
      status: 202,
      response: workflowStarted,
      errors: [409],
      handler: async ({ params, body }) => {
        const started = await startRun(deps.db, deps.paths, params.name, body.inputs, (p) =>
          deps.endpoint.request('turn.start', p),
        );
        return { status: 202, body: started };
      },
    }),
    route({
      method: 'GET',
      path: '/api/workflows/runs/:id',
      summary:
        'One run: status, inputs, each step with its state and short output, the error and failed step.',
      response: workflowRunSchema,
      handler: ({ params }) => {
        const run = getRun(deps.db, params.id);
        if (!run)
          throw new ApiError('not_found', `There is no workflow run ${JSON.stringify(params.id)}.`);
        return { body: run };
      },
    }),
  ];
}
