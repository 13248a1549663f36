import { z } from 'zod';
import { runInputsSchema } from '../../../../shared/workflows/start.js';
import { defineTool } from '../registry.js';

/** Starts a workflow run in a session of its own; answers at once with where to follow it. */
export function runWorkflowTool(
  start: (
    name: string,
    inputs: Record<string, string | number | boolean>,
  ) => Promise<{ run_id: string; session_id: string }>,
) {
  return defineTool({
    name: 'run_workflow',
    purpose: 'Starts one of your saved workflows; each of its steps asks for itself.',
    description:
      'Starts a saved workflow (GET /api/workflows lists them, with their inputs) with the given inputs. It runs in the background in a session of its own; this answers the run id and session id at once. Its shell commands and tool calls ask for approval like yours do.',
    args: z
      .object({
        name: z.string().min(1).max(64).describe('The workflow name.'),
        inputs: runInputsSchema.default({}).describe('Values for the workflow inputs, by name.'),
      })
      .strict(),
    run: async ({ name, inputs }) => {
      const r = await start(name, inputs);
      return {
        output: JSON.stringify({
          started: true,
          workflow: name,
          run_id: r.run_id,
          session_id: r.session_id,
          follow: `the session ${r.session_id} holds every step; events on the "workflows" topic`,
        }),
      };
    },
  });
}
