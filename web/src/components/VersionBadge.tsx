import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import type { WsEventData } from '../../../src/shared/protocol/events';
import { live, type LiveEvent } from '../lib/live';

/** The server's own shapes (the /ws catalogue): GET /api/version and the upgrade's steps. */
type VersionInfo = WsEventData<'version'>;
type Step = WsEventData<'upgrade'>;

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

function stepText(s: Step): string {
  if (s.stage === 'downloading' && s.bytes !== undefined && s.total)
    return `Downloading: ${mib(s.bytes)} of ${mib(s.total)} (${Math.floor((s.bytes / s.total) * 100)}%)`;
  return s.message ?? s.stage;
}

/**
 * The running version in the top bar, with a dot when the automatic check found a newer release.
 * Its popover shows the notes and an Upgrade button (POST /api/version/upgrade); the progress comes
 * on /ws (topic server, type upgrade), and once svc restarts the badge reads the new version.
 */
export function VersionBadge() {
  const [info, setInfo] = useState<VersionInfo | undefined>();
  const [open, setOpen] = useState(false);
  const [steps, setSteps] = useState<Step[]>([]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const box = useRef<HTMLDivElement>(null);

  const load = () =>
    api('GET', '/api/version')
      .then(setInfo)
      .catch(() => undefined);

  useEffect(() => {
    void load();
    return live.on('server', (e: LiveEvent) => {
      if (e.type === 'version') setInfo(e.data);
      else if (e.type === 'upgrade') {
        const step = e.data;
        setSteps((old) =>
          step.stage === 'downloading' && old.at(-1)?.stage === 'downloading'
            ? [...old.slice(0, -1), step]
            : [...old, step],
        );
        if (step.stage === 'failed') setBusy(false);
      } else if (e.type === '$reset') void load(); // a restarted svc: perhaps the new version
    });
  }, []);

  useEffect(() => {
    if (!info || !busy || steps.length === 0) return;
    if (info.version === steps.find((s) => s.stage === 'restarting')?.version) setBusy(false);
  }, [info, busy, steps]);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOpen(false);
    };
    const onClick = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onClick);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onClick);
    };
  }, [open]);

  if (!info) return null;
  const upgrade = async () => {
    setError('');
    setSteps([]);
    setBusy(true);
    try {
      await api('POST', '/api/version/upgrade');
    } catch (err) {
      setBusy(false);
      setError(describe(err));
    }
  };
  // the visible text starts the accessible name (WCAG label-in-name)
  const label = `v${info.version}, the svc version${info.update_available ? `; update available: ${info.latest}` : ''}`;
  return (
    <div class="version-badge" ref={box}>
      <button
        type="button"
        class="ghost version-button"
        aria-label={label}
        aria-expanded={open}
        aria-haspopup="dialog"
        onClick={() => setOpen(!open)}
        data-testid="version-badge"
      >
        v{info.version}
        {info.update_available && <span class="update-dot" aria-hidden="true" />}
      </button>
      {open && (
        <div class="version-popover" role="dialog" aria-label="svc version">
          <p>
            Running <strong>svc {info.version}</strong>
            {info.dev_build ? ' (a development build, never upgraded)' : ''}.
          </p>
          {info.latest === null ? (
            <p class="muted">
              {info.checked_at
                ? 'The last check for a newer release failed.'
                : 'No check for a newer release yet.'}
            </p>
          ) : info.update_available ? (
            <>
              <p>
                <strong>svc {info.latest}</strong> is available.
                {info.release_url && (
                  <>
                    {' '}
                    <a href={info.release_url} target="_blank" rel="noreferrer">
                      Release page
                    </a>
                  </>
                )}
              </p>
              {info.notes.length > 0 && <pre class="release-notes">{info.notes.join('\n')}</pre>}
              <button
                type="button"
                class="primary"
                onClick={upgrade}
                disabled={busy || info.upgrading}
              >
                {busy || info.upgrading ? 'Upgrading…' : `Upgrade to ${info.latest}`}
              </button>
            </>
          ) : (
            <p class="muted">Up to date (latest release: {info.latest}).</p>
          )}
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          {steps.length > 0 && (
            <ol class="upgrade-steps" aria-live="polite" aria-label="Upgrade progress">
              {steps.map((s, i) => (
                <li key={i} data-stage={s.stage}>
                  {stepText(s)}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </div>
  );
}
