import { useRef, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';
import type { Schemas } from '../lib/types';
import { Modal } from './Modal';

export type WorkflowInput = Schemas['Workflow']['inputs'][string];
export type Started = Answer<'POST', '/api/workflows/{name}/run'>;

type Value = string | number | boolean;

/**
 * The inputs form of one workflow, in a dialog: a field per input (typed, its default filled in,
 * its description read with it). The server checks the inputs; its 400 names the one to fix and
 * the dialog stays open. On 202 the run goes on and the page follows it live.
 */
export function WorkflowRunDialog({
  name,
  inputs,
  onClose,
  onStarted,
}: {
  name: string;
  inputs: Record<string, WorkflowInput>;
  onClose: () => void;
  onStarted: (s: Started) => void;
}) {
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(
      Object.entries(inputs).map(([k, spec]) => [
        k,
        spec.type === 'boolean'
          ? spec.default === true
          : spec.default === undefined
            ? ''
            : String(spec.default),
      ]),
    ),
  );
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const entries = Object.entries(inputs);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const out: Record<string, Value> = {};
    for (const [k, spec] of entries) {
      const v = values[k];
      if (typeof v === 'boolean') out[k] = v;
      else if (v !== undefined && v.trim() !== '')
        out[k] = spec.type === 'number' && Number.isFinite(Number(v)) ? Number(v) : v;
    }
    try {
      onStarted(
        await api('POST', '/api/workflows/{name}/run', { params: { name }, body: { inputs: out } }),
      );
    } catch (err) {
      setError(describe(err));
      setBusy(false);
    }
  };

  return (
    <Modal
      labelledBy="wf-run-title"
      describedBy="wf-run-desc"
      onClose={() => !busy && onClose()}
      initialFocus={entries.length ? first : undefined}
      testId="workflow-run-dialog"
    >
      <form class="stack" onSubmit={submit}>
        <h2 id="wf-run-title">Run {name}</h2>
        <p id="wf-run-desc" class="muted">
          {entries.length
            ? 'The run is a session of its own; every step is kept there.'
            : 'This workflow takes no inputs. The run is a session of its own; every step is kept there.'}
        </p>
        {entries.map(([k, spec], i) => {
          const hint = spec.description ? `wf-in-${k}-hint` : undefined;
          const v = values[k];
          const id = `wf-in-${k}`;
          return (
            <div key={k} class="field">
              {spec.type === 'boolean' ? (
                <label class="check">
                  <input
                    ref={i === 0 ? first : undefined}
                    id={id}
                    type="checkbox"
                    checked={v === true}
                    aria-describedby={hint}
                    onChange={(e) => setValues({ ...values, [k]: e.currentTarget.checked })}
                  />{' '}
                  {k}
                </label>
              ) : (
                <>
                  <label for={id}>
                    {k}
                    {spec.required ? ' (required)' : ''}
                  </label>
                  <input
                    ref={i === 0 ? first : undefined}
                    id={id}
                    type="text"
                    inputMode={spec.type === 'number' ? 'decimal' : undefined}
                    value={typeof v === 'string' ? v : ''}
                    aria-required={spec.required ? 'true' : undefined}
                    aria-describedby={hint}
                    onInput={(e) => setValues({ ...values, [k]: e.currentTarget.value })}
                  />
                </>
              )}
              {hint && (
                <span id={hint} class="muted small">
                  {spec.description}
                </span>
              )}
            </div>
          );
        })}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Run
          </button>
          <button type="button" disabled={busy} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
