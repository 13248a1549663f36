import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';
import { BackupStatus } from './BackupStatus';
import { ConfirmDialog } from './ConfirmDialog';
import { bytes, duration } from '../lib/format';
import { live } from '../lib/live';
import { serverState } from '../lib/server';
import { useStore } from '../lib/store';

type Status = Answer<'GET', '/api/status'>;

/** What `svc status` shows, the version and health, and a restart button; refreshed every few seconds. */
export function StatusView() {
  const [status, setStatus] = useState<Status | undefined>();
  const [health, setHealth] = useState<Answer<'GET', '/api/health'> | undefined>();
  const [error, setError] = useState('');
  const [restarting, setRestarting] = useState(false);
  const [asking, setAsking] = useState(false);
  const conn = useStore(live.state);
  const server = useStore(serverState);
  const epochs = useStore(live.epochs);

  const load = async () => {
    try {
      const [s, h] = await Promise.all([api('GET', '/api/status'), api('GET', '/api/health')]);
      setStatus(s);
      setHealth(h);
      setError('');
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => {
    void load();
    const t = setInterval(load, 3000);
    return () => clearInterval(t);
  }, []);
  // A restart is over when the server runs again: a new epoch (after a crash) or, as a restart
  // keeps the epoch, its `resumed` on the server topic.
  useEffect(() => {
    if (server === 'draining') return;
    setRestarting(false);
    void load();
  }, [epochs, server]);

  const restart = async () => {
    setAsking(false);
    try {
      await api('POST', '/api/restart', { body: {} });
      setRestarting(true);
    } catch (err) {
      setError(describe(err));
    }
  };

  const state =
    conn !== 'online'
      ? 'reconnecting'
      : server === 'draining' || restarting
        ? 'restarting'
        : (status?.state ?? '…');
  return (
    <div class="page" data-testid="status-view">
      <h1 class="page-title">Status</h1>
      <div class="cards">
        <div class="card stat">
          <span class="muted small">Server</span>
          <strong class={`state ${state}`} data-testid="server-state">
            {state}
          </strong>
        </div>
        <div class="card stat">
          <span class="muted small">Health</span>
          <strong>{health ? health.status : '–'}</strong>
          {health && <span class="muted small">up {duration(health.uptime_s)}</span>}
        </div>
        <div class="card stat">
          <span class="muted small">Version</span>
          <strong data-testid="server-version">{status?.version ?? '–'}</strong>
          {status?.uws && <span class="muted small">uWebSockets.js {status.uws}</span>}
        </div>
        <div class="card stat">
          <span class="muted small">Command sandbox</span>
          <strong
            class={status?.sandbox?.state === 'on' ? '' : 'error'}
            data-testid="sandbox-state"
          >
            {status?.sandbox?.state ?? '–'}
          </strong>
        </div>
        <div class="card stat">
          <span class="muted small">Restarts</span>
          <strong>{status?.restarts ?? 0}</strong>
        </div>
      </div>
      {status?.sandbox && status.sandbox.state !== 'on' && (
        <p class="error" role="alert" data-testid="sandbox-message">
          {status.sandbox.message}
        </p>
      )}
      {status?.last_restart_error && (
        <p class="error">Last restart failed: {status.last_restart_error}</p>
      )}
      {error && <p class="error-state">{error}</p>}
      <div class="table-wrap" role="region" aria-label="Processes" tabIndex={0}>
        <table class="procs">
          <thead>
            <tr>
              <th>Role</th>
              <th>PID</th>
              <th>State</th>
              <th>Uptime</th>
              <th>Restarts</th>
              <th>Memory</th>
              <th>Running turns</th>
            </tr>
          </thead>
          <tbody>
            {status?.processes.map((p) => (
              <tr key={`${p.role}-${p.pid}`} data-testid="process-row">
                <td data-label="Role">{p.role}</td>
                <td data-label="PID">{p.pid}</td>
                <td data-label="State" class={p.state === 'unresponsive' ? 'error' : undefined}>
                  {p.state}
                </td>
                <td data-label="Uptime">{duration(p.uptime_s)}</td>
                <td data-label="Restarts">{p.restarts}</td>
                <td data-label="Memory">{bytes(p.rss_bytes)}</td>
                <td data-label="Running turns">{p.inflight_turns}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="actions">
        <button type="button" onClick={load}>
          Refresh
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => setAsking(true)}
          disabled={state === 'restarting'}
        >
          Restart server
        </button>
      </div>
      {asking && (
        <ConfirmDialog
          title="Restart the server?"
          action="Restart"
          danger
          onConfirm={() => void restart()}
          onCancel={() => setAsking(false)}
          testId="restart-confirm"
        >
          <p>Running turns finish first; new ones wait until it is back.</p>
        </ConfirmDialog>
      )}
      <BackupStatus />
    </div>
  );
}
