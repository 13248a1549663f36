import { useEffect, useState } from 'preact/hooks';
import { api, describe, get, post, path } from '../lib/api';
import { bytes, when } from '../lib/format';
import { live } from '../lib/live';
import { restoreSession } from '../lib/sessions';
import { go } from '../lib/router';
import { toast } from '../lib/toast';
import type { TrashItem } from '../lib/types';
import { action } from '../lib/action';

/** Deleted things: restore one, delete one for good, or empty the trash. Live via the `trash` topic. */
export function TrashPanel() {
  const [data, setData] = useState<{ items: TrashItem[]; total_bytes: number } | undefined>();
  const [error, setError] = useState('');

  const load = () =>
    get<{ items: TrashItem[]; total_bytes: number }>('/api/trash').then(
      (r) => {
        setData(r);
        setError('');
      },
      (err) => setError(describe(err)),
    );
  useEffect(() => {
    void load();
    return live.on('trash', () => void load());
  }, []);

  const act = action(load, setError);

  const restore = (item: TrashItem) =>
    act(async () => {
      if (item.kind === 'session') {
        const s = await restoreSession(item.id);
        toast(`Restored "${item.name}".`, s ? { action: { label: 'Open', run: () => go(`chat/${s.id}`) } } : {});
      } else {
        await post(path`/api/trash/${item.id}/restore`, {});
        toast(`Restored "${item.name}".`);
      }
    });

  return (
    <section class="stack" data-testid="trash-panel">
      <h2>Trash</h2>
      <p class="muted">Deleted items wait here until they expire. {data ? `${data.items.length} item${data.items.length === 1 ? '' : 's'}, ${bytes(data.total_bytes)}.` : ''}</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {data?.items.length === 0 && <p class="muted">The trash is empty.</p>}
      {data && data.items.length > 0 && (
        <>
          <ul class="plain list">
            {data.items.map((item) => (
              <li key={item.id} class="row" data-testid="trash-item" data-id={item.id}>
                <div class="grow">
                  <strong>{item.name}</strong> <span class="chip">{item.kind}</span>
                  <div class="muted small">
                    deleted {when(item.deleted_at)} · expires {when(item.expires_at)} · {bytes(item.size_bytes)}
                  </div>
                </div>
                <div class="actions">
                  <button type="button" onClick={() => restore(item)}>
                    Restore
                  </button>
                  <button type="button" class="danger" onClick={() => confirm(`Delete "${item.name}" for good?`) && act(() => api('DELETE', path`/api/trash/${item.id}`))}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
          <div>
            <button type="button" class="danger" onClick={() => confirm('Delete everything in the trash for good?') && act(() => post('/api/trash/empty', {}))}>
              Empty the trash
            </button>
          </div>
        </>
      )}
    </section>
  );
}
