import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, ApiError, describe } from '../lib/api';
import type { Schemas } from '../lib/types';
import { when } from '../lib/format';
import { live } from '../lib/live';
import { toast } from '../lib/toast';
import { action } from '../lib/action';
import { cronTaskLabels as L } from '../../../src/shared/form-labels';

type CronTaskView = Schemas['CronTask'];
type RunView = Schemas['CronRun'];
type RunStatus = RunView['status'];
type Preview = Answer<'GET', '/api/cron/preview'>;

const TASK_ID = /^task_[a-z0-9]{21}$/;
/** A task's id as a path parameter, checked first. */
const taskParams = (id: string) => {
  if (!TASK_ID.test(id)) throw new Error(`"${id}" is not a task id.`);
  return { params: { id } };
};
/** Common schedules, one click each; the field still takes any cron expression. */
const PRESETS: ReadonlyArray<readonly [string, string]> = [
  ['Every morning at 9', '0 9 * * *'],
  ['Weekdays at 9', '0 9 * * 1-5'],
  ['Every hour', '0 * * * *'],
  ['Every 15 minutes', '*/15 * * * *'],
  ['Mondays at 9', '0 9 * * 1'],
  ['Evenings at 6', '0 18 * * *'],
  ['First of the month', '0 9 1 * *'],
];

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** A fire time as the task's zone sees it: "Tue 25 Nov 09:00". */
function wall(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat('en-GB', {
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone,
    })
      .format(new Date(iso))
      .replace(',', '');
  } catch {
    return iso;
  }
}

/**
 * The Schedules page: cron tasks with what their schedule means and when they fire next, live
 * from the `tasks` topic; create and edit with a preview of the expression, enable or disable,
 * run now, delete to the trash, and each task's run history with links to the runs' sessions.
 */
export function SchedulesView() {
  const [tasks, setTasks] = useState<CronTaskView[] | undefined>();
  const [error, setError] = useState('');
  const [editing, setEditing] = useState<CronTaskView | 'new' | undefined>();
  const [runsTick, setRunsTick] = useState(0);
  const load = () =>
    api('GET', '/api/tasks', { query: { kind: 'cron' } }).then(
      (r) => {
        // ?kind=cron lists cron tasks only; the answer's type is every kind's.
        setTasks(r.items.filter((t): t is CronTaskView => t.kind === 'cron'));
        setError('');
      },
      (err) => setError(describe(err)),
    );
  useEffect(() => {
    void load();
    return live.on('tasks', () => {
      void load();
      setRunsTick((n) => n + 1);
    });
  }, []);

  const act = action(load, setError);

  return (
    <div class="page stack" data-testid="schedules-view">
      <h1 class="page-title">Schedules</h1>
      <p class="muted">
        Tasks that run a prompt on a schedule, each run in a session of its own. An approval nobody
        answers is denied after its timeout.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {!tasks && !error && <p class="loading">Loading…</p>}
      {tasks?.length === 0 && <p class="empty-state">No scheduled task yet: add one below.</p>}
      <ul class="plain stack" aria-label="Scheduled tasks">
        {tasks?.map((t) => (
          <li key={t.id} class="card stack" data-testid="schedule" data-name={t.name}>
            <div class="row">
              <div class="grow">
                <strong>{t.name}</strong>{' '}
                <span class={`chip ${t.enabled ? 'status-connected' : 'status-disabled'}`}>
                  {t.enabled ? 'enabled' : 'disabled'}
                </span>
                <div class="small" data-testid="schedule-when">
                  {t.description} <code>{t.schedule}</code> ({t.timezone})
                </div>
                <div class="muted small" data-testid="schedule-next">
                  {t.next_run_at
                    ? `Next: ${wall(t.next_run_at, t.timezone)}`
                    : 'Not scheduled while disabled'}
                  {t.last_run && ` · last run ${when(t.last_run.started_at)}: ${t.last_run.status}`}
                </div>
              </div>
              <div class="actions">
                <button
                  type="button"
                  onClick={() =>
                    act(
                      () =>
                        api('PATCH', '/api/tasks/{id}', {
                          ...taskParams(t.id),
                          body: { enabled: !t.enabled },
                        }),
                      `${t.enabled ? 'Disabled' : 'Enabled'} "${t.name}".`,
                    )
                  }
                >
                  {t.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  onClick={() =>
                    act(
                      () => api('POST', '/api/tasks/{id}/run', taskParams(t.id)),
                      `Started "${t.name}".`,
                    )
                  }
                >
                  Run now
                </button>
                <button type="button" onClick={() => setEditing(t)}>
                  Edit
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    act(
                      () => api('DELETE', '/api/tasks/{id}', taskParams(t.id)),
                      `Moved "${t.name}" to the trash.`,
                    )
                  }
                >
                  Delete
                </button>
              </div>
            </div>
            {editing !== 'new' && editing?.id === t.id && (
              <TaskForm
                task={t}
                onDone={(msg) => (setEditing(undefined), act(async () => undefined, msg))}
                onCancel={() => setEditing(undefined)}
              />
            )}
            <RunHistory id={t.id} tick={runsTick} />
          </li>
        ))}
      </ul>
      {editing === 'new' ? (
        <TaskForm
          onDone={(msg) => (setEditing(undefined), act(async () => undefined, msg))}
          onCancel={() => setEditing(undefined)}
        />
      ) : (
        <div>
          <button type="button" class="primary" onClick={() => setEditing('new')}>
            New schedule
          </button>
        </div>
      )}
    </div>
  );
}

function RunHistory({ id, tick }: { id: string; tick: number }) {
  const [open, setOpen] = useState(false);
  const [runs, setRuns] = useState<RunView[] | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    if (!open) return;
    api('GET', '/api/tasks/{id}/runs', taskParams(id)).then(
      (r) => setRuns(r.items),
      (err) => setError(describe(err)),
    );
  }, [open, tick, id]);
  return (
    <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Run history</summary>
      {error && <p class="error small">{error}</p>}
      {open && runs?.length === 0 && <p class="muted small">No run yet.</p>}
      <ol class="plain" aria-label="Runs" data-testid="runs">
        {runs?.map((r) => (
          <li key={r.id} data-testid="run" data-status={r.status}>
            <span class={`chip run-${r.status}`}>{r.status}</span>{' '}
            {new Date(r.started_at).toLocaleString()}{' '}
            <span class="muted small">({r.trigger.replace('_', '-')})</span>{' '}
            {r.session_id && (
              <a href={`#/chat/${encodeURIComponent(r.session_id)}`}>Open session</a>
            )}
            {r.error && <div class="error small">{r.error}</div>}
            {r.approvals.map((a, i) => (
              <div key={i} class="muted small">
                Approval for {a.tool}: {a.decision ?? 'waiting'}
                {a.why ? ` (${a.why})` : ''}
              </div>
            ))}
            {r.notify_results
              .filter((n) => !n.ok)
              .map((n, i) => (
                <div key={`n${i}`} class="muted small">
                  Not delivered to {n.platform} {n.chat_id}: {n.error}
                </div>
              ))}
          </li>
        ))}
      </ol>
    </details>
  );
}

function TaskForm({
  task,
  onDone,
  onCancel,
}: {
  task?: CronTaskView;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const [f, setF] = useState({
    name: task?.name ?? '',
    schedule: task?.schedule ?? '0 9 * * 1-5',
    timezone: task?.timezone ?? browserZone(),
    prompt: task?.prompt ?? '',
    permission_mode: task?.permission_mode ?? 'auto',
    max_runtime_seconds: String(task?.max_runtime_seconds ?? 1800),
    catch_up: task?.catch_up ?? true,
  });
  const [preview, setPreview] = useState<Preview | undefined>();
  const [previewError, setPreviewError] = useState('');
  const [error, setError] = useState('');
  /** The field the server's refusal is about (its `details`), when it names one. */
  const [errorField, setErrorField] = useState('');
  const [busy, setBusy] = useState(false);
  const field = (key: 'name' | 'schedule' | 'timezone' | 'prompt' | 'max_runtime_seconds') => ({
    value: f[key],
    onInput: (e: Event) => setF({ ...f, [key]: (e.target as HTMLInputElement).value }),
  });

  // The preview asks the server (croner and cronstrue there), a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => {
      if (!f.schedule.trim()) return;
      const query = { schedule: f.schedule, timezone: f.timezone, count: 3 };
      // An unknown zone is the API's error too: one message, under the fields, says which.
      api('GET', '/api/cron/preview', { query }).then(
        (p) => {
          setPreview(p);
          setPreviewError('');
        },
        (err) => {
          setPreview(undefined);
          setPreviewError(describe(err));
        },
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [f.schedule, f.timezone]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setErrorField('');
    try {
      const body = {
        name: f.name.trim(),
        schedule: f.schedule.trim(),
        timezone: f.timezone.trim(),
        prompt: f.prompt,
        permission_mode: f.permission_mode,
        max_runtime_seconds: Number(f.max_runtime_seconds),
        catch_up: f.catch_up,
      };
      if (task) await api('PATCH', '/api/tasks/{id}', { ...taskParams(task.id), body });
      else await api('POST', '/api/tasks', { body: { kind: 'cron', ...body } });
      onDone(task ? `Saved "${body.name}".` : `Scheduled "${body.name}".`);
    } catch (err) {
      setError(describe(err));
      setErrorField(fieldOf(err));
    } finally {
      setBusy(false);
    }
  };

  const titleId = task ? `edit-${task.id}` : 'schedule-new-title';
  return (
    <form
      class="card stack"
      onSubmit={submit}
      aria-labelledby={titleId}
      data-testid="schedule-form"
    >
      <h2 id={titleId}>{task ? `Edit "${task.name}"` : 'New schedule'}</h2>
      <label class="field">
        {L.name} <input required maxLength={200} {...field('name')} />
      </label>
      <div class="field">
        <label for={`${titleId}-schedule`}>{L.schedule}</label>
        <input
          id={`${titleId}-schedule`}
          required
          spellcheck={false}
          autoComplete="off"
          aria-describedby={`${titleId}-schedule-help ${titleId}-preview`}
          {...field('schedule')}
        />
        <span class="muted small" id={`${titleId}-schedule-help`}>
          Pick one below, or write a cron expression: minute hour day month weekday (0 9 * * 1-5 is
          09:00 on weekdays).
        </span>
        <div class="presets" role="group" aria-label="Common schedules">
          {PRESETS.map(([label, expr]) => (
            <button
              key={expr}
              type="button"
              aria-pressed={f.schedule.trim() === expr}
              onClick={() => setF({ ...f, schedule: expr })}
            >
              {label}
            </button>
          ))}
        </div>
      </div>
      <label class="field">
        {L.timezone} <input required {...field('timezone')} />
      </label>
      <div
        class="small"
        aria-live="polite"
        id={`${titleId}-preview`}
        data-testid="schedule-preview"
      >
        {previewError ? (
          <span class="error">{previewError}</span>
        ) : preview ? (
          <>
            <strong>{preview.description}.</strong>{' '}
            {preview.next.length > 0 ? (
              <span data-testid="schedule-next-runs">
                Next runs: {preview.next.map((n) => wall(n.at, preview.timezone)).join(' · ')}
              </span>
            ) : (
              'It never runs.'
            )}
          </>
        ) : (
          ''
        )}
      </div>
      <label class="field">
        {L.prompt} <textarea required rows={4} {...field('prompt')} />
      </label>
      <div class="row">
        <label class="field">
          {L.permission_mode}
          <select
            value={f.permission_mode}
            onChange={(e) =>
              setF({
                ...f,
                permission_mode: (e.target as HTMLSelectElement).value as typeof f.permission_mode,
              })
            }
          >
            <option value="auto">auto</option>
            <option value="interactive">interactive (asks; denied after the timeout)</option>
            <option value="strict">strict</option>
          </select>
        </label>
        <label class="field">
          {L.max_runtime_seconds} <input type="number" min={1} {...field('max_runtime_seconds')} />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={f.catch_up}
            onChange={(e) => setF({ ...f, catch_up: (e.target as HTMLInputElement).checked })}
          />{' '}
          {L.catch_up}
        </label>
      </div>
      {/* A schedule or zone problem shows once, in the preview (which says it as typed). */}
      {error && !(previewError && (errorField === 'schedule' || errorField === 'timezone')) && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {task ? 'Save' : 'Create'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The key of the first field an API refusal names in its details, or ''. */
function fieldOf(err: unknown): string {
  const first: unknown =
    err instanceof ApiError && Array.isArray(err.details) ? err.details[0] : undefined;
  return typeof first === 'object' &&
    first !== null &&
    'path' in first &&
    typeof first.path === 'string'
    ? first.path
    : '';
}
