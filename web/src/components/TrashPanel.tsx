import { useEffect, useRef, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';
import { bytes, when } from '../lib/format';
import { live } from '../lib/live';
import { restoreSession } from '../lib/sessions';
import { go } from '../lib/router';
import { toast } from '../lib/toast';
import type { TrashItem } from '../lib/types';
import { action } from '../lib/action';
import { ConfirmDialog } from './ConfirmDialog';

type TrashPage = Answer<'GET', '/api/trash'>;

/** Items per page; a refresh re-reads as many as are shown (up to the API's 200). */
const PAGE = 50;

/**
 * Deleted things, a page at a time (more load as the list's end scrolls into view, or with
 * "Load more"): restore one, delete one for good, or empty the trash. Live via the `trash` topic.
 */
export function TrashPanel() {
  const [data, setData] = useState<TrashPage | undefined>();
  const [error, setError] = useState('');
  const [loadingMore, setLoadingMore] = useState(false);
  const shown = useRef(0);
  const end = useRef<HTMLDivElement>(null);
  /** What waits for "for good": one item, or the whole trash. */
  const [asking, setAsking] = useState<TrashItem | 'all' | undefined>();

  const load = () =>
    api('GET', '/api/trash', {
      query: { limit: Math.min(200, Math.max(PAGE, shown.current)) },
    }).then(
      (r) => {
        shown.current = r.items.length;
        setData(r);
        setError('');
      },
      (err) => setError(describe(err)),
    );
  const loadMore = async () => {
    const cursor = data?.next_cursor;
    if (!cursor || loadingMore) return;
    setLoadingMore(true);
    try {
      const r = await api('GET', '/api/trash', { query: { limit: PAGE, cursor } });
      setData((d) => {
        const known = new Set(d?.items.map((i) => i.id));
        const items = [...(d?.items ?? []), ...r.items.filter((i) => !known.has(i.id))];
        shown.current = items.length;
        return { ...r, items };
      });
    } catch (err) {
      setError(describe(err));
    } finally {
      setLoadingMore(false);
    }
  };
  useEffect(() => {
    void load();
    return live.on('trash', () => void load());
  }, []);
  // The next page loads when the end of the list scrolls into view.
  useEffect(() => {
    const el = end.current;
    if (!el || !data?.next_cursor || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver(
      (entries) => entries.some((e) => e.isIntersecting) && void loadMore(),
    );
    io.observe(el);
    return () => io.disconnect();
  }, [data?.next_cursor, loadingMore]);

  const act = action(load, setError);

  const restore = (item: TrashItem) =>
    act(async () => {
      if (item.kind === 'session') {
        const s = await restoreSession(item.id);
        toast(
          `Restored "${item.name}".`,
          s ? { action: { label: 'Open', run: () => go(`chat/${s.id}`) } } : {},
        );
      } else {
        await api('POST', '/api/trash/{id}/restore', { params: { id: item.id } });
        toast(`Restored "${item.name}".`);
      }
    });

  return (
    <section class="stack" data-testid="trash-panel">
      <h2>Trash</h2>
      <p class="muted">
        Deleted items wait here until they expire.{' '}
        {data
          ? `${data.total_items} item${data.total_items === 1 ? '' : 's'}, ${bytes(data.total_bytes)}.`
          : ''}
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {data?.items.length === 0 && <p class="empty-state">The trash is empty.</p>}
      {data && data.items.length > 0 && (
        <>
          <ul class="plain list">
            {data.items.map((item) => (
              <li key={item.id} class="row" data-testid="trash-item" data-id={item.id}>
                <div class="grow">
                  <strong>{item.name}</strong> <span class="chip">{item.kind}</span>
                  <div class="muted small">
                    deleted {when(item.deleted_at)} · expires {when(item.expires_at)} ·{' '}
                    {bytes(item.size_bytes)}
                  </div>
                </div>
                <div class="actions">
                  <button type="button" onClick={() => restore(item)}>
                    Restore
                  </button>
                  <button type="button" class="danger" onClick={() => setAsking(item)}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
          {data.next_cursor && (
            <div ref={end}>
              <button
                type="button"
                onClick={() => void loadMore()}
                disabled={loadingMore}
                data-testid="trash-more"
              >
                {loadingMore
                  ? 'Loading…'
                  : `Load more (${data.total_items - data.items.length} more)`}
              </button>
            </div>
          )}
          <div>
            <button type="button" class="danger" onClick={() => setAsking('all')}>
              Empty the trash
            </button>
          </div>
        </>
      )}
      {asking && (
        <ConfirmDialog
          title={
            asking === 'all'
              ? 'Delete everything in the trash for good?'
              : `Delete "${asking.name}" for good?`
          }
          action="Delete for good"
          danger
          testId="trash-confirm"
          onCancel={() => setAsking(undefined)}
          onConfirm={() => {
            const what = asking;
            setAsking(undefined);
            void act(() =>
              what === 'all'
                ? api('POST', '/api/trash/empty')
                : api('DELETE', '/api/trash/{id}', { params: { id: what.id } }),
            );
          }}
        >
          <p>It cannot be restored afterwards.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
