import { useEffect, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import { configVersion } from '../lib/server';
import { useStore } from '../lib/store';
import type { ModelEntry, Provider, TestResult as Result } from '../lib/types';
import { ConfirmDialog } from './ConfirmDialog';
import { ModelForm } from './ModelForm';
import { TestResult } from './TestResult';

/** Model entries and the two slots: add, edit, test, put in a slot, remove. */
export function ModelsPanel() {
  const version = useStore(configVersion);
  const [models, setModels] = useState<ModelEntry[] | undefined>();
  const [providers, setProviders] = useState<Provider[]>([]);
  const [editing, setEditing] = useState<string | 'new' | undefined>();
  const [tests, setTests] = useState<Record<string, Result | 'running'>>({});
  const [error, setError] = useState('');
  /** The entry waiting for "Remove" to be confirmed. */
  const [removing, setRemoving] = useState<string | undefined>();

  const load = () =>
    api('GET', '/api/config/models').then(
      (r) => setModels(r.items),
      (err) => setError(describe(err)),
    );
  useEffect(() => void load(), [version]);
  useEffect(() => {
    api('GET', '/api/providers').then(
      (r) => setProviders(r.items),
      () => undefined,
    );
  }, []);

  const act = async (fn: () => Promise<unknown>) => {
    setError('');
    try {
      await fn();
      await load();
    } catch (err) {
      setError(describe(err));
    }
  };
  const test = async (id: string) => {
    setTests((t) => ({ ...t, [id]: 'running' }));
    try {
      const r = await api('POST', '/api/config/test', { body: { model_id: id } });
      setTests((t) => ({ ...t, [id]: r }));
    } catch (err) {
      setTests((t) => ({
        ...t,
        [id]: { ok: false, reason: 'request_failed', message: describe(err) },
      }));
    }
  };

  // The form closes: focus goes back to the Edit button that opened it.
  const backToEdit = (id: string) =>
    requestAnimationFrame(() =>
      document
        .querySelector<HTMLElement>(
          `[data-testid=model-entry][data-id="${CSS.escape(id)}"] [data-testid=edit-model]`,
        )
        ?.focus(),
    );

  return (
    <section class="stack" data-testid="models-panel">
      <h2>Models</h2>
      <p class="muted">
        The default slot runs every chat that does not pick a model; the lite slot does small jobs.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {models?.length === 0 && <p class="empty-state">No model entry yet.</p>}
      {models?.map((m) => {
        const t = tests[m.id];
        return (
          <div key={m.id} class="card row-card" data-testid="model-entry" data-id={m.id}>
            <div class="row">
              <div class="grow">
                <strong>{m.id}</strong>{' '}
                {m.slots.map((s) => (
                  <span key={s} class="chip">
                    {s}
                  </span>
                ))}
                <div class="muted small">
                  {m.provider} · {m.model} · {m.protocol} · {m.base_url ?? 'no address'} · key{' '}
                  {m.api_key_set
                    ? `set${m.api_key_source ? ` (${m.api_key_source})` : ''}`
                    : 'not set'}
                </div>
              </div>
              <div class="actions">
                <button type="button" onClick={() => test(m.id)} disabled={t === 'running'}>
                  {t === 'running' ? 'Testing…' : 'Test'}
                </button>
                {!m.slots.includes('default') && (
                  <button
                    type="button"
                    onClick={() =>
                      act(() =>
                        api('PUT', '/api/config/models/default', { body: { model_id: m.id } }),
                      )
                    }
                  >
                    Make default
                  </button>
                )}
                {m.slots.includes('lite') ? (
                  <button
                    type="button"
                    onClick={() =>
                      act(() => api('PUT', '/api/config/models/lite', { body: { model_id: null } }))
                    }
                  >
                    Clear lite
                  </button>
                ) : (
                  <button
                    type="button"
                    onClick={() =>
                      act(() => api('PUT', '/api/config/models/lite', { body: { model_id: m.id } }))
                    }
                  >
                    Make lite
                  </button>
                )}
                <button
                  type="button"
                  data-testid="edit-model"
                  aria-expanded={editing === m.id}
                  onClick={() => setEditing(editing === m.id ? undefined : m.id)}
                >
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => setRemoving(m.id)}>
                  Remove
                </button>
              </div>
            </div>
            {t && t !== 'running' && <TestResult result={t} />}
            {editing === m.id && providers.length > 0 && (
              <ModelForm
                providers={providers}
                entry={m}
                submitLabel="Save"
                onCancel={() => {
                  setEditing(undefined);
                  backToEdit(m.id);
                }}
                onSaved={async () => {
                  setEditing(undefined);
                  await load();
                  backToEdit(m.id);
                }}
              />
            )}
          </div>
        );
      })}
      {editing === 'new' ? (
        <div class="card">
          <h3>New model entry</h3>
          <ModelForm
            providers={providers}
            submitLabel="Add"
            onCancel={() => setEditing(undefined)}
            onSaved={async (e) => {
              setEditing(undefined);
              await load();
              await test(e.id);
            }}
          />
        </div>
      ) : (
        <div>
          <button
            type="button"
            class="primary"
            onClick={() => setEditing('new')}
            disabled={providers.length === 0}
          >
            + Add a model
          </button>
        </div>
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove the model entry ${removing}?`}
          action="Remove"
          danger
          testId="model-remove-confirm"
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => {
            const id = removing;
            setRemoving(undefined);
            void act(() => api('DELETE', '/api/config/models/{id}', { params: { id } }));
          }}
        >
          <p>The entry leaves config.yml; a model slot still using it must be changed first.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
