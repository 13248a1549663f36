import { useState } from 'preact/hooks';
import { api, type BodyOf, describe } from '../lib/api';
import { tokens } from '../lib/format';
import { goalUsage, type Goal } from '../lib/types';

/** The chat's goal: what it works toward, its status, and how much of its token budget it used. */
export function GoalPanel({
  sessionId,
  goal,
  note,
  onChange,
}: {
  sessionId: string;
  goal: Goal | null;
  note?: string | undefined;
  onChange: (g: Goal | null) => void;
}) {
  const [objective, setObjective] = useState('');
  const [budget, setBudget] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError('');
    try {
      await fn();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  const goalPath = '/api/sessions/{id}/goal';
  const put = (body: BodyOf<'PUT', typeof goalPath>) =>
    run(async () => onChange(await api('PUT', goalPath, { params: { id: sessionId }, body })));

  const { tokens: used, turns } = goal ? goalUsage(goal) : { tokens: 0, turns: 0 };
  const pct = goal?.token_budget ? Math.min(100, Math.round((used / goal.token_budget) * 100)) : 0;
  return (
    <section class="goal-panel" data-testid="goal-panel">
      <h4>Goal</h4>
      {goal ? (
        <>
          <p class="goal-objective">{goal.objective}</p>
          <p>
            <span class={`chip ${goal.status}`} data-testid="goal-status">
              {goal.status.replace(/_/g, ' ')}
            </span>{' '}
            <span class="muted small">
              {turns} turn{turns === 1 ? '' : 's'} · {tokens(used)} tokens
              {goal.token_budget ? ` of ${tokens(goal.token_budget)}` : ''}
            </span>
          </p>
          {goal.token_budget ? (
            <div
              class="meter"
              role="progressbar"
              aria-label="Token budget used"
              aria-valuenow={pct}
              aria-valuemin={0}
              aria-valuemax={100}
            >
              <div style={{ width: `${pct}%` }} />
            </div>
          ) : null}
          {note && <p class="muted small">{note}</p>}
          <div class="actions">
            {goal.status === 'active' ? (
              <button type="button" disabled={busy} onClick={() => put({ status: 'paused' })}>
                Pause
              </button>
            ) : (
              <button type="button" disabled={busy} onClick={() => put({ status: 'active' })}>
                Resume
              </button>
            )}
            <button type="button" disabled={busy} onClick={() => put({ status: 'complete' })}>
              Mark complete
            </button>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() =>
                run(async () => {
                  await api('DELETE', goalPath, { params: { id: sessionId } });
                  onChange(null);
                })
              }
            >
              Clear
            </button>
          </div>
        </>
      ) : (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (!objective.trim()) return;
            const b = parseInt(budget, 10);
            void put({ objective: objective.trim(), ...(b > 0 ? { token_budget: b } : {}) }).then(
              () => setObjective(''),
            );
          }}
        >
          <p class="muted small">
            A goal keeps the agent working across turns until it is reached, blocked or out of
            budget.
          </p>
          <label class="field">
            <span>Objective</span>
            <textarea
              rows={2}
              value={objective}
              placeholder="What should this chat achieve?"
              onInput={(e) => setObjective(e.currentTarget.value)}
            />
          </label>
          <label class="field">
            <span>Token budget (optional)</span>
            <input
              type="number"
              min={1}
              value={budget}
              onInput={(e) => setBudget(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy || !objective.trim()}>
            Set goal
          </button>
        </form>
      )}
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
