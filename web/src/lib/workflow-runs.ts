import type { LiveEvent } from './live';
import type { Schemas } from './types';

/**
 * Workflow runs as the Workflows page keeps them: built from the `workflows` topic's events and
 * from GET /api/workflows/runs/{id} snapshots, merged so a state never goes backwards (an event
 * can arrive before the answer that started the run, and a snapshot can be older than an event).
 */

export type RunStatus = Schemas['WorkflowRun']['status'];
export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface StepState {
  status: Exclude<StepStatus, 'pending'>;
  output: string | null;
}

export interface RunState {
  id: string;
  workflow: string;
  session_id: string;
  status: RunStatus;
  steps: Record<string, StepState>;
  error: string | null;
  failed_step: string | null;
}

/** A run as GET /api/workflows/runs/{id} answers it (the fields this page reads). */
/** A run as GET /api/workflows/runs/{id} answers it. */
export type RunSnapshot = Schemas['WorkflowRun'];

const runRank: Record<RunStatus, number> = {
  queued: 0,
  running: 1,
  completed: 2,
  failed: 2,
  interrupted: 2,
};
const stepRank: Record<StepStatus, number> = {
  pending: 0,
  running: 1,
  completed: 2,
  failed: 2,
  skipped: 2,
};

export const isOver = (s: RunStatus) => runRank[s] === 2;

function mergeStep(a: StepState | undefined, b: StepState): StepState {
  if (!a || stepRank[b.status] > stepRank[a.status]) return b;
  return a;
}

/** `next` over `old`, keeping whichever of each state is further along. */
export function mergeRun(old: RunState | undefined, next: RunState): RunState {
  if (!old) return next;
  const steps = { ...old.steps };
  for (const [id, s] of Object.entries(next.steps)) steps[id] = mergeStep(steps[id], s);
  const newer = runRank[next.status] > runRank[old.status];
  return {
    ...old,
    session_id: next.session_id || old.session_id,
    status: newer ? next.status : old.status,
    steps,
    error: newer ? next.error : (old.error ?? next.error),
    failed_step: newer ? next.failed_step : (old.failed_step ?? next.failed_step),
  };
}

export function fromSnapshot(r: RunSnapshot): RunState {
  return {
    id: r.id,
    workflow: r.workflow,
    session_id: r.session_id,
    status: r.status,
    steps: { ...r.steps },
    error: r.error,
    failed_step: r.failed_step,
  };
}

/** What one `workflows` event says about its run, or undefined for an event this page does not read. */
export function fromEvent(e: LiveEvent): RunState | undefined {
  if (!e.type.startsWith('workflow.') || e.type === '$reset') return undefined;
  const base = (d: { run_id: string; workflow: string; session_id: string }): RunState => ({
    id: d.run_id,
    workflow: d.workflow,
    session_id: d.session_id,
    status: 'running',
    steps: {},
    error: null,
    failed_step: null,
  });
  switch (e.type) {
    case 'workflow.run_started':
      return base(e.data);
    case 'workflow.step_started':
      return { ...base(e.data), steps: { [e.data.step]: { status: 'running', output: null } } };
    case 'workflow.step_completed':
      return {
        ...base(e.data),
        steps: { [e.data.step]: { status: 'completed', output: e.data.output } },
      };
    case 'workflow.run_completed':
      return { ...base(e.data), status: 'completed' };
    case 'workflow.run_failed': {
      const step = e.data.step;
      return {
        ...base(e.data),
        status: e.data.reason === 'interrupted' ? 'interrupted' : 'failed',
        error: e.data.message,
        failed_step: step,
        steps: step ? { [step]: { status: 'failed', output: null } } : {},
      };
    }
    default:
      return undefined;
  }
}

/** One sentence for the page's status region. */
export function summary(r: RunState): string {
  if (r.status === 'completed') return 'The run completed.';
  if (r.status === 'interrupted') return 'The run was interrupted.';
  if (r.status === 'failed')
    return `The run failed${r.failed_step ? ` at step ${r.failed_step}` : ''}${r.error ? `: ${r.error}` : '.'}`;
  const running = Object.entries(r.steps).find(([, s]) => s.status === 'running');
  return running ? `Running step ${running[0]}…` : 'Starting…';
}
