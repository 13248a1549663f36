import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type BodyOf, describe } from '../lib/api';

/** Reads a profile file from /api/profile/<name>; '' when the server has none (or no such route yet). */
export async function readProfile(
  name: 'soul' | 'user',
): Promise<{ text: string; available: boolean; truncated: boolean }> {
  try {
    const r = await api('GET', name === 'soul' ? '/api/profile/soul' : '/api/profile/user');
    return { text: r.content, available: true, truncated: r.truncated };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      return { text: '', available: false, truncated: false };
    throw err;
  }
}

/** soul.md (who the agent is) and user.md (who you are), written through the onboarding route. */
export function ProfileForm({
  submitLabel,
  onSaved,
  load = false,
  primary = true,
}: {
  submitLabel: string;
  onSaved?: () => void;
  load?: boolean;
  /** Whether Save is the view's one primary action (default true). */
  primary?: boolean;
}) {
  const [soul, setSoul] = useState('');
  const [user, setUser] = useState('');
  const [state, setState] = useState<{
    busy?: boolean;
    error?: string;
    saved?: boolean;
    note?: string;
  }>({});
  const [tooBig, setTooBig] = useState(false);
  // While the saved files load, the fields wait: what someone typed must not be overwritten.
  const [ready, setReady] = useState(!load);

  useEffect(() => {
    if (!load) return;
    Promise.all([readProfile('soul'), readProfile('user')]).then(
      ([s, u]) => {
        setSoul(s.text);
        setUser(u.text);
        setReady(true);
        setTooBig(s.truncated || u.truncated);
        if (s.truncated || u.truncated)
          setState({
            note: 'A profile file is larger than this page can edit; edit it on the server instead.',
          });
        else if (!s.available || !u.available)
          setState({
            note: 'This server cannot show the saved profile yet; what you save here replaces it.',
          });
      },
      (err) => {
        setReady(true);
        setState({ error: describe(err) });
      },
    );
  }, [load]);

  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      const body: BodyOf<'POST', '/api/onboard/status'> = {};
      if (soul.trim() || load) body.soul = soul;
      if (user.trim() || load) body.user = user;
      if (Object.keys(body).length > 0) await api('POST', '/api/onboard/status', { body });
      setState({ saved: true });
      onSaved?.();
    } catch (err) {
      setState({ error: describe(err) });
    }
  };

  return (
    <form class="stack" onSubmit={save} data-testid="profile-form">
      <label class="field">
        <span>
          soul.md{' '}
          <span class="muted small">
            — who the agent is: tone, habits, what it should always do
          </span>
        </span>
        <textarea
          rows={6}
          value={soul}
          name="soul"
          disabled={!ready}
          onInput={(e) => setSoul(e.currentTarget.value)}
          placeholder="You are a calm, precise assistant…"
        />
      </label>
      <label class="field">
        <span>
          user.md <span class="muted small">— who you are: name, work, preferences</span>
        </span>
        <textarea
          rows={6}
          value={user}
          name="user"
          disabled={!ready}
          onInput={(e) => setUser(e.currentTarget.value)}
          placeholder="I am…"
        />
      </label>
      {state.note && <p class="muted small">{state.note}</p>}
      {state.error && (
        <p class="error small" role="alert">
          {state.error}
        </p>
      )}
      <div class="actions">
        <button
          type="submit"
          class={primary ? 'primary' : undefined}
          disabled={state.busy || tooBig || !ready}
        >
          {submitLabel}
        </button>
        {state.saved && <span class="ok small">Saved.</span>}
      </div>
    </form>
  );
}
