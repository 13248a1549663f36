import { z } from 'zod';
import { ApiError } from '../errors.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { createSession } from '../store/sessions.js';
import { findWorkflow } from './catalog.js';
import type { Workflow } from './format.js';
import { createRun, setRunStatus, type WorkflowRun } from './runs.js';

export const runInputsSchema = z.record(
  z.string(),
  z.union([z.string().max(100_000), z.number(), z.boolean()]),
);

/** The inputs with defaults filled in; an unknown, missing or mistyped one is a 400 naming it. */
export function resolveInputs(
  name: string,
  wf: Workflow,
  given: Record<string, string | number | boolean>,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(wf.inputs, key))
      throw new ApiError(
        'invalid_request',
        `The workflow "${name}" has no input "${key}"; its inputs are: ${Object.keys(wf.inputs).join(', ') || 'none'}.`,
        [{ path: `inputs.${key}`, message: 'unknown input' }],
      );
  }
  for (const [key, spec] of Object.entries(wf.inputs)) {
    const v = (Object.hasOwn(given, key) ? given[key] : undefined) ?? spec.default;
    if (v === undefined) {
      if (spec.required)
        throw new ApiError(
          'invalid_request',
          `The workflow "${name}" needs the input "${key}"${spec.description ? ` (${spec.description})` : ''}.`,
          [{ path: `inputs.${key}`, message: 'required' }],
        );
      continue;
    }
    if (typeof v !== spec.type)
      throw new ApiError(
        'invalid_request',
        `The input "${key}" of "${name}" must be a ${spec.type}.`,
        [{ path: `inputs.${key}`, message: `expected ${spec.type}` }],
      );
    out[key] = v;
  }
  return out;
}

/**
 * Everything before a run's turn: the workflow must exist and be valid, the inputs complete; the
 * run gets a session of its own (so every step's messages are kept like a chat) and a row.
 * The caller then starts the turn through the supervisor with the run's id.
 */
export function prepareRun(
  db: Db,
  paths: Pick<Paths, 'home'>,
  name: string,
  given: Record<string, string | number | boolean>,
): { run: WorkflowRun; text: string } {
  const entry = findWorkflow(paths, name);
  if (!entry)
    throw new ApiError(
      'not_found',
      `There is no workflow named ${JSON.stringify(name)}; GET /api/workflows lists them.`,
    );
  if (!entry.workflow) {
    const e = entry.error!;
    throw new ApiError(
      'conflict',
      `The workflow "${name}" is invalid and cannot run: ${e.line === null ? '' : `line ${e.line}, `}${e.field}: ${e.message}.`,
      { reason: 'invalid_workflow', error: e },
    );
  }
  const inputs = resolveInputs(name, entry.workflow, given);
  const session = createSession(db, { title: `Workflow: ${name}` });
  const run = createRun(db, { workflow: name, session_id: session.id, inputs });
  const shown = Object.keys(inputs).length ? `\nInputs: ${JSON.stringify(inputs)}` : '';
  return { run, text: `Run the workflow "${name}" (${entry.workflow.description})${shown}` };
}

/**
 * Prepares a run and starts its turn through the supervisor (`startTurn` sends turn.start); a
 * refused start (draining, no worker) ends the run failed before the error goes back.
 */
export async function startRun(
  db: Db,
  paths: Pick<Paths, 'home'>,
  name: string,
  given: Record<string, string | number | boolean>,
  startTurn: (p: {
    session_id: string;
    message: { text: string; attachments: never[] };
    origin: 'workflow';
    workflow_run_id: string;
  }) => Promise<{ turn_id: string }>,
): Promise<{ run_id: string; session_id: string; turn_id: string; workflow: string }> {
  const { run, text } = prepareRun(db, paths, name, given);
  try {
    const { turn_id } = await startTurn({
      session_id: run.session_id,
      message: { text, attachments: [] },
      origin: 'workflow',
      workflow_run_id: run.id,
    });
    return { run_id: run.id, session_id: run.session_id, turn_id, workflow: name };
  } catch (err) {
    setRunStatus(db, run.id, 'failed', {
      error: `the run could not start: ${(err as Error).message}`,
    });
    throw err;
  }
}
