import { useState } from 'preact/hooks';

/**
 * The key prompt for a visitor the server does not trust without it. The key goes to the server
 * as `/?access_key=`, which answers with an HttpOnly cookie and a redirect to a clean address:
 * the page itself never stores it.
 */
export function AccessPrompt({ rejected }: { rejected: boolean }) {
  const [key, setKey] = useState('');
  const submit = (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return;
    location.assign(`/?access_key=${encodeURIComponent(k)}`);
  };
  return (
    <main class="center-page">
      <form class="card narrow" onSubmit={submit} data-testid="access-prompt">
        <h1>svc</h1>
        <p>This server needs its access key before it lets you in.</p>
        <p class="muted">
          <code>svc serve</code> prints an address with the key when it listens beyond this machine;
          the key is also in <code>$SVC_HOME/access_key</code> on the server.
        </p>
        {rejected && (
          <p class="error" role="alert">
            That key was not accepted. Check it and try again.
          </p>
        )}
        <label class="field">
          <span>Access key</span>
          <input
            type="password"
            name="access_key"
            autoComplete="current-password"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            autoFocus
            required
          />
        </label>
        <button type="submit" class="primary">
          Unlock
        </button>
      </form>
    </main>
  );
}
