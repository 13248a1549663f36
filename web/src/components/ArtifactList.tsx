import { useEffect, useState } from 'preact/hooks';
import { api, urlOf } from '../lib/api';
import { bytes, when } from '../lib/format';
import type { Artifact } from '../lib/types';

/** Files this chat's tools wrote, each opened through the API (sandboxed, never as a page). */
export function ArtifactList({ sessionId }: { sessionId: string }) {
  const [items, setItems] = useState<Artifact[] | undefined>();
  useEffect(() => {
    api('GET', '/api/sessions/{id}/artifacts', { params: { id: sessionId } }).then(
      (r) => setItems(r.items),
      () => setItems([]),
    );
  }, [sessionId]);
  if (!items || items.length === 0) return null;
  return (
    <section>
      <h4>Files</h4>
      <ul class="plain">
        {items.map((a) => (
          <li key={a.id}>
            <a
              href={urlOf('/api/sessions/{id}/artifacts/{artifact_id}', {
                id: sessionId,
                artifact_id: a.id,
              })}
              target="_blank"
              rel="noopener noreferrer"
            >
              {a.path.split('/').pop()}
            </a>{' '}
            <span class="muted small">
              {bytes(a.size)} · {when(a.updated_at)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
