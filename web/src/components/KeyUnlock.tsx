import { useState } from 'preact/hooks';
import { describe, unlock } from '../lib/api';

/**
 * Asks for the access key where an action needs it even on this machine (answering an approval,
 * widening a chat's rights): a program on this machine reaches svc without the key, so only the
 * key tells svc that a person clicked. The key becomes the HttpOnly cookie; then `onUnlocked`
 * retries the action.
 */
export function KeyUnlock({
  what,
  rejected,
  onUnlocked,
}: {
  what: string;
  rejected: boolean;
  onUnlocked: () => Promise<void>;
}) {
  const [key, setKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return;
    setBusy(true);
    setError('');
    try {
      await unlock(k);
      await onUnlocked();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack" data-testid="key-unlock">
      <p class="small">
        {what} needs the access key, even on this machine: a program running here could otherwise do
        it for you. <code>svc key show</code> prints it; this browser then keeps it.
      </p>
      {rejected && (
        <p class="error small" role="alert">
          That key was not accepted. Check it and try again.
        </p>
      )}
      {error && (
        <p class="error small" role="alert">
          {error}
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
          onKeyDown={(e) => {
            if (e.key === 'Enter') void submit(e);
          }}
          data-testid="key-unlock-input"
        />
      </label>
      <button type="button" class="primary" disabled={busy || !key.trim()} onClick={submit}>
        Unlock
      </button>
    </div>
  );
}
