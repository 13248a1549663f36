/**
 * Workflow runs as the Workflows page keeps them: built from the `workflows` topic's events and
 * from GET /api/workflows/runs/{id} snapshots, merged so a state never goes backwards (an event
 * can arrive before the answer that started the run, and a snapshot can be older than an event).
 */

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'interrupted';
export type StepStatus = 'pending' | 'running' | 'completed' | 'failed';

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
export interface RunSnapshot {
  id: string;
  workflow: string;
  session_id: string;
  status: RunStatus;
  steps: Record<string, { status: StepState['status']; output: string | null }>;
  error: string | null;
  failed_step: string | null;
}

const runRank: Record<RunStatus, number> = { queued: 0, running: 1, completed: 2, failed: 2, interrupted: 2 };
const stepRank: Record<StepStatus, number> = { pending: 0, running: 1, completed: 2, failed: 2 };

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
  return { id: r.id, workflow: r.workflow, session_id: r.session_id, status: r.status, steps: { ...r.steps }, error: r.error, failed_step: r.failed_step };
}

/** What one `workflows` event says about its run, or undefined for an event this page does not read. */
export function fromEvent(type: string, data: unknown): RunState | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const id = str(d.run_id);
  const workflow = str(d.workflow);
  if (!id || !workflow) return undefined;
  const step = str(d.step);
  const base: RunState = { id, workflow, session_id: str(d.session_id) ?? '', status: 'running', steps: {}, error: null, failed_step: null };
  switch (type) {
    case 'workflow.run_started':
      return base;
    case 'workflow.step_started':
      return step ? { ...base, steps: { [step]: { status: 'running', output: null } } } : undefined;
    case 'workflow.step_completed':
      return step ? { ...base, steps: { [step]: { status: 'completed', output: str(d.output) } } } : undefined;
    case 'workflow.run_completed':
      return { ...base, status: 'completed' };
    case 'workflow.run_failed':
      return {
        ...base,
        status: d.reason === 'interrupted' ? 'interrupted' : 'failed',
        error: str(d.message),
        failed_step: step,
        steps: step ? { [step]: { status: 'failed', output: null } } : {},
      };
    default:
      return undefined;
  }
}

/** One sentence for the page's status region. */
export function summary(r: RunState): string {
  if (r.status === 'completed') return 'The run completed.';
  if (r.status === 'interrupted') return 'The run was interrupted.';
  if (r.status === 'failed') return `The run failed${r.failed_step ? ` at step ${r.failed_step}` : ''}${r.error ? `: ${r.error}` : '.'}`;
  const running = Object.entries(r.steps).find(([, s]) => s.status === 'running');
  return running ? `Running step ${running[0]}…` : 'Starting…';
}
