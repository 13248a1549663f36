import { useEffect, useState } from 'preact/hooks';
import { type Answer, ApiError, api, describe } from '../lib/api';
import { bytes, when } from '../lib/format';
import { Markdown } from './Markdown';
import { ProfileForm } from './ProfileForm';

type Memories = Answer<'GET', '/api/memories'>;

/** The profile files (editable) and what the agent remembers (read-only): the index and the notes. */
export function ProfilePanel() {
  const [memories, setMemories] = useState<Memories | 'unavailable' | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    api('GET', '/api/memories').then(setMemories, (err) =>
      err instanceof ApiError && err.status === 404
        ? setMemories('unavailable')
        : setError(describe(err)),
    );
  }, []);
  const m = typeof memories === 'object' ? memories : undefined;
  return (
    <section class="stack" data-testid="profile-panel">
      <h2>Profile</h2>
      <p class="muted">The agent reads these two files at the start of every chat.</p>
      <ProfileForm submitLabel="Save profile" load />
      <h2>Memory</h2>
      {error && <p class="error">{error}</p>}
      {memories === 'unavailable' && <p class="muted">This server does not list memories yet.</p>}
      {m && !m.index && m.files.length === 0 && <p class="muted">Nothing remembered yet.</p>}
      {m?.index && (
        <div class="card" data-testid="memory-index">
          <Markdown text={m.index} />
          {m.index_truncated && <p class="muted small">(only the beginning is shown)</p>}
        </div>
      )}
      {m && m.files.length > 0 && (
        <ul class="plain list" data-testid="memory-files">
          {m.files.map((f) => (
            <li key={f.name} class="row">
              <code class="grow">{f.file ?? f.name}</code>
              <span class="muted small">
                {bytes(f.size)} · {when(f.updated_at)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
