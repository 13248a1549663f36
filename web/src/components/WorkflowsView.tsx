import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import { live } from '../lib/live';
import { toast } from '../lib/toast';
import type { Schemas } from '../lib/types';
import {
  fromEvent,
  fromSnapshot,
  isOver,
  mergeRun,
  summary,
  type RunSnapshot,
  type RunState,
  type StepStatus,
} from '../lib/workflow-runs';
import { WorkflowRunDialog, type Started, type WorkflowInput } from './WorkflowRunDialog';

type WorkflowView = Schemas['Workflow'];

const KIND = { prompt: 'agent prompt', run: 'shell command', tool: 'tool call' } as const;

/**
 * The Workflows page: every workflow (invalid ones with their error), a Run button that opens the
 * inputs form, and each workflow's latest run with its steps progressing live from the
 * `workflows` topic and a link to the run's session, where every step's messages are kept.
 */
export function WorkflowsView() {
  const [items, setItems] = useState<WorkflowView[] | undefined>();
  const [error, setError] = useState('');
  const [runs, setRuns] = useState<Record<string, RunState>>({});
  /** workflow name → the id of the run shown for it (the newest seen). */
  const [shown, setShown] = useState<Record<string, string>>({});
  const [running, setRunning] = useState<WorkflowView | undefined>();
  const known = useRef(new Set<string>());

  const put = (r: RunState, show: boolean) => {
    setRuns((all) => ({ ...all, [r.id]: mergeRun(all[r.id], r) }));
    if (show) setShown((s) => (s[r.workflow] === r.id ? s : { ...s, [r.workflow]: r.id }));
  };

  const fetchRun = (id: string) =>
    api('GET', '/api/workflows/runs/{id}', { params: { id } }).then(
      (r) => put(fromSnapshot(r), false),
      () => undefined,
    );

  const load = (refetch: boolean) =>
    api('GET', '/api/workflows').then(
      (r) => {
        setItems(r.items);
        setError('');
        for (const w of r.items) {
          if (!w.last_run) continue;
          const l = w.last_run;
          put(
            {
              id: l.id,
              workflow: w.name,
              session_id: l.session_id,
              status: l.status,
              steps: {},
              error: l.error,
              failed_step: l.failed_step,
            },
            false,
          );
          setShown((s) => (s[w.name] ? s : { ...s, [w.name]: l.id }));
          if (refetch || !known.current.has(l.id)) {
            known.current.add(l.id);
            void fetchRun(l.id);
          }
        }
      },
      (err) => setError(describe(err)),
    );

  useEffect(() => {
    void load(false);
    return live.on('workflows', (e) => {
      if (e.type === '$reset') return void load(true);
      const r = fromEvent(e);
      if (!r) return;
      known.current.add(r.id);
      put(r, true);
      if (e.type === 'workflow.run_completed' || e.type === 'workflow.run_failed') void load(false);
    });
  }, []);

  const started = (s: Started) => {
    setRunning(undefined);
    known.current.add(s.run_id);
    put(
      {
        id: s.run_id,
        workflow: s.workflow,
        session_id: s.session_id,
        status: 'queued',
        steps: {},
        error: null,
        failed_step: null,
      },
      true,
    );
    toast(`Started "${s.workflow}".`);
  };

  return (
    <div class="page stack" data-testid="workflows-view">
      <h1 class="page-title">Workflows</h1>
      <p class="muted">
        Steps the agent runs in order: agent prompts, shell commands and tool calls, passing outputs
        along. Add your own as YAML files in the workflows folder of svc's home.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {!items && !error && <p class="loading">Loading…</p>}
      {items?.length === 0 && <p class="empty-state">No workflow yet.</p>}
      <ul class="plain stack" aria-label="Workflows">
        {items?.map((w) => {
          const run = shown[w.name] ? runs[shown[w.name]!] : undefined;
          return (
            <li key={w.name} class="card stack row-card" data-testid="workflow" data-name={w.name}>
              <div class="row">
                <div class="grow">
                  <h2 class="inline">{w.name}</h2>{' '}
                  <span class="chip">{w.source === 'builtin' ? 'built-in' : 'yours'}</span>
                  {!w.valid && (
                    <>
                      {' '}
                      <span class="chip invalid">invalid</span>
                    </>
                  )}
                  {w.description && <div class="muted small">{w.description}</div>}
                </div>
                {w.valid && (
                  <div class="actions">
                    <button type="button" onClick={() => setRunning(w)} data-testid="workflow-run">
                      Run…<span class="sr-only"> {w.name}</span>
                    </button>
                  </div>
                )}
              </div>
              {!w.valid && w.why && (
                <p class="error small" data-testid="workflow-why">
                  {w.why}
                </p>
              )}
              {/* A finished run read from the list has no steps until its own answer arrives: show none meanwhile. */}
              {w.valid && (
                <Steps
                  w={w}
                  run={
                    run && (Object.keys(run.steps).length > 0 || !isOver(run.status))
                      ? run
                      : undefined
                  }
                />
              )}
              <p role="status" class="small" data-testid="workflow-status">
                {run ? summary(run) : ''}
              </p>
              {run?.session_id && (
                <p class="small">
                  <a href={`#/chat/${run.session_id}`} data-testid="workflow-session">
                    {isOver(run.status) ? "Open the run's session" : "Follow the run's session"}
                    <span class="sr-only"> ({w.name})</span>
                  </a>
                </p>
              )}
            </li>
          );
        })}
      </ul>
      {running && (
        <WorkflowRunDialog
          name={running.name}
          inputs={running.inputs}
          onClose={() => setRunning(undefined)}
          onStarted={started}
        />
      )}
    </div>
  );
}

/** The workflow's steps in file order; with a run, each with its state and short output. */
function Steps({ w, run }: { w: WorkflowView; run: RunState | undefined }) {
  return (
    <ol class="wf-steps" aria-label={`Steps of ${w.name}`}>
      {w.steps.map((s) => {
        const st = run?.steps[s.id];
        const status: StepStatus = st?.status ?? 'pending';
        return (
          <li
            key={s.id}
            class={`wf-step ${run ? status : ''}`}
            data-testid="workflow-step"
            data-step={s.id}
            data-status={run ? status : undefined}
          >
            <div class="row">
              <strong>{s.id}</strong>
              <span class="muted small">
                {KIND[s.kind]}
                {s.model ? ` (${s.model} model)` : ''}
                {s.needs.length ? ` · after ${s.needs.join(', ')}` : ''}
              </span>
              {run && <span class={`chip ${status}`}>{status}</span>}
            </div>
            {st?.output && <pre class="wf-output">{st.output}</pre>}
          </li>
        );
      })}
    </ol>
  );
}
