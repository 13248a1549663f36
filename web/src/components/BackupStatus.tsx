import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe, urlOf } from '../lib/api';
import { bytes, duration, when } from '../lib/format';

type Backups = Answer<'GET', '/api/backups'>;

/** A time with its date, as a person checks when the last backup ran. */
const at = (iso: string) => new Date(iso).toLocaleString();

/**
 * Backups on the Status page: the schedule, how the last one went, a button to make one now,
 * and the newest archive to download (it holds secrets unless encrypted, and says so).
 */
export function BackupStatus() {
  const [b, setB] = useState<Backups | undefined>();
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | undefined>();

  const load = () =>
    api('GET', '/api/backups').then(
      (r) => {
        setB(r);
        setError('');
      },
      (err) => setError(`Backups could not be read: ${describe(err)}`),
    );
  useEffect(() => void load(), []);

  const backUp = async () => {
    setBusy(true);
    setResult(undefined);
    try {
      const r = await api('POST', '/api/backups');
      setResult({
        ok: true,
        text: `Backed up ${r.files} files to ${r.name} (${bytes(r.size)}) in ${duration(r.ms / 1000)}.`,
      });
    } catch (err) {
      setResult({ ok: false, text: `The backup failed: ${describe(err)}` });
    } finally {
      setBusy(false);
      void load();
    }
  };

  const last = b?.last;
  const newest = b?.items[0];
  return (
    <section class="card stack" aria-labelledby="backups-title" data-testid="backup-status">
      <h2 id="backups-title">Backups</h2>
      {error && <p class="error">{error}</p>}
      {b && (
        <dl class="facts">
          <dt>Schedule</dt>
          <dd data-testid="backup-schedule">
            {b.schedule ? `${b.schedule} (cron), keeping the newest ${b.keep}` : 'not scheduled'}
            {b.encrypt ? ', encrypted' : ''}
          </dd>
          <dt>Last backup</dt>
          <dd data-testid="backup-last">
            {!last ? (
              'none yet'
            ) : last.ok ? (
              <>
                {at(last.ended_at)}: ok, {bytes(last.size)} in {duration(last.ms / 1000)} (
                {last.trigger})
              </>
            ) : (
              <span class="error">
                {at(last.ended_at)}: failed ({last.trigger}): {last.error ?? 'no reason given'}
              </span>
            )}
          </dd>
          <dt>Folder</dt>
          <dd>
            <code>{b.dir}</code>
          </dd>
        </dl>
      )}
      <div class="actions">
        <button type="button" onClick={backUp} disabled={busy} data-testid="backup-now">
          {busy ? 'Backing up…' : 'Back up now'}
        </button>
        {newest && (
          <a
            href={urlOf('/api/backups/{name}', { name: newest.name })}
            download
            data-testid="backup-download"
          >
            Download {newest.name} ({bytes(newest.size)}, {when(newest.created_at)})
          </a>
        )}
      </div>
      {newest && !newest.encrypted && (
        <p class="muted small">
          An archive holds your API keys and logins: keep it like a password file.
        </p>
      )}
      <p
        role="status"
        class={result && !result.ok ? 'error' : undefined}
        data-testid="backup-result"
      >
        {result?.text ?? ''}
      </p>
    </section>
  );
}
