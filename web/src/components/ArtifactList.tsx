import { useEffect, useState } from 'preact/hooks';
import { get, path } from '../lib/api';
import { bytes, when } from '../lib/format';

interface Artifact {
  id: string;
  path: string;
  size: number;
  mime: string;
  updated_at: string;
}

/** Files this chat's tools wrote, each opened through the API (sandboxed, never as a page). */
export function ArtifactList({ sessionId }: { sessionId: string }) {
  const [items, setItems] = useState<Artifact[] | undefined>();
  useEffect(() => {
    get<{ items: Artifact[] }>(path`/api/sessions/${sessionId}/artifacts`).then(
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
              href={path`/api/sessions/${sessionId}/artifacts/${a.id}`}
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
