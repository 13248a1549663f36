import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';
import { configVersion } from '../lib/server';
import { useStore } from '../lib/store';
import { toast } from '../lib/toast';
import type { ModelEntry, Session } from '../lib/types';

type Models = Answer<'GET', '/api/config/models'>;

/** "main · gpt-4o": the entry a person named, and the model it asks. */
const named = (m: ModelEntry) => (m.model === m.id ? m.id : `${m.id} · ${m.model}`);

/**
 * The model that answers in this chat, in the chat's header, and the place to switch it: the
 * default slot's entry (said by name) or one the chat picked. A switch is saved at once and
 * holds from the next turn on.
 */
export function ModelPicker({
  session,
  onSaved,
}: {
  session: Session;
  onSaved: (s: Session) => void;
}) {
  const [models, setModels] = useState<Models | undefined>();
  const [busy, setBusy] = useState(false);
  const version = useStore(configVersion);
  useEffect(() => {
    api('GET', '/api/config/models').then(setModels, () => setModels(undefined));
  }, [version]);
  if (!models || models.items.length === 0) return null;

  const fallback = models.items.find((m) => m.id === models.slots.default);
  const current = session.model_id ?? '';
  const change = async (value: string) => {
    setBusy(true);
    try {
      onSaved(
        await api('PATCH', '/api/sessions/{id}', {
          params: { id: session.id },
          body: { model_id: value || null },
        }),
      );
    } catch (err) {
      toast(`The model was not changed: ${describe(err)}`, { kind: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <label class="model-picker" title="The model that answers in this chat">
      <span class="sr-only">Model for this chat</span>
      <select
        value={current}
        disabled={busy}
        onChange={(e) => void change(e.currentTarget.value)}
        data-testid="chat-model"
      >
        <option value="">{fallback ? `${named(fallback)} (default)` : 'The default model'}</option>
        {models.items
          .filter(
            (m) =>
              current === m.id ||
              (m.id !== models.slots.default && !m.slots.includes('embeddings')),
          )
          .map((m) => (
            <option key={m.id} value={m.id}>
              {named(m)}
            </option>
          ))}
        {current && !models.items.some((m) => m.id === current) && (
          <option value={current}>{current} (no such entry now)</option>
        )}
      </select>
    </label>
  );
}
