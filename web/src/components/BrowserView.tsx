import { useEffect, useRef, useState } from 'preact/hooks';
import { type Answer, api, ApiError, describe } from '../lib/api';
import { queueFirstMessage } from '../lib/chat';
import { go } from '../lib/router';
import { upsertSession } from '../lib/sessions';
import { toast } from '../lib/toast';
import { browserVerifyLabels } from '../../../src/shared/form-labels';

type Status = Answer<'GET', '/api/browser/status'>;
type RecordingSummary = Answer<'GET', '/api/browser/recordings'>['recordings'][number];
type Recording = Answer<'GET', '/api/browser/recordings/{name}'>;
type Step = NonNullable<Recording['recording']>['steps'][number];
interface Issue {
  message: string;
  line: number | null;
  column: number | null;
}

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
/** A recording's name as a path parameter; one a person typed that cannot be is said in words. */
const recording = (name: string) => {
  if (!NAME.test(name))
    throw new Error(
      `"${name}" is not a valid recording name (1-64 letters, digits, dots, dashes or underscores).`,
    );
  return { params: { name } };
};

const TEMPLATE = `description: What this recording does
params:
  - name: query
    default: hello
steps:
  - action: navigate
    value: https://example.com/
  - action: type
    target: "#search"
    value: "{{query}}"
  - action: press
    value: Enter
`;

/**
 * The Browser page: the connection's status (with the fix when not connected), verify a DevTools
 * port, and the recordings: listed with their steps, edited as YAML (errors shown with their line),
 * replayed into a new chat, deleted to the trash.
 */
export function BrowserView() {
  const [status, setStatus] = useState<Status | undefined>();
  const [recordings, setRecordings] = useState<RecordingSummary[] | undefined>();
  const [error, setError] = useState('');
  const [editing, setEditing] = useState<
    { name: string; yaml: string; isNew: boolean } | undefined
  >();
  const loadStatus = () =>
    api('GET', '/api/browser/status').then(setStatus, (err) => setError(describe(err)));
  const loadRecordings = () =>
    api('GET', '/api/browser/recordings').then(
      (r) => setRecordings(r.recordings),
      (err) => setError(describe(err)),
    );
  useEffect(() => {
    void loadStatus();
    void loadRecordings();
  }, []);

  const edit = async (name: string) => {
    try {
      const r = await api('GET', '/api/browser/recordings/{name}', recording(name));
      setEditing({ name, yaml: r.yaml, isNew: false });
    } catch (err) {
      setError(describe(err));
    }
  };
  const remove = async (name: string) => {
    try {
      await api('DELETE', '/api/browser/recordings/{name}', recording(name));
      toast(`Moved "${name}" to the trash.`);
      if (editing?.name === name) setEditing(undefined);
    } catch (err) {
      setError(describe(err));
    }
    await loadRecordings();
  };

  return (
    <div class="page stack" data-testid="browser-view">
      <h1 class="page-title">Browser</h1>
      <p class="muted">
        The agent drives a Chromium over the DevTools Protocol with its browser tool; pages on this
        machine, private networks and files ask first.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      <StatusCard status={status} onVerified={() => void loadStatus()} onStatus={setStatus} />
      <section class="stack" aria-labelledby="recordings-title">
        <div class="row">
          <h2 id="recordings-title" class="grow">
            Recordings
          </h2>
          <button
            type="button"
            onClick={() => setEditing({ name: '', yaml: TEMPLATE, isNew: true })}
          >
            New recording
          </button>
        </div>
        {!recordings && <p class="loading">Loading…</p>}
        {recordings?.length === 0 && (
          <p class="empty-state">No recording yet. The agent replays one with browser_replay.</p>
        )}
        <ul class="plain stack" aria-label="Recordings">
          {recordings?.map((r) => (
            <RecordingCard
              key={r.name}
              r={r}
              onEdit={() => void edit(r.name)}
              onDelete={() => void remove(r.name)}
              onError={setError}
            />
          ))}
        </ul>
        {editing && (
          <Editor
            key={editing.name || 'new'}
            initial={editing}
            onClose={() => setEditing(undefined)}
            onSaved={(name) => {
              toast(`Saved "${name}".`);
              setEditing(undefined);
              void loadRecordings();
            }}
          />
        )}
      </section>
    </div>
  );
}

function StatusCard({
  status,
  onVerified,
  onStatus,
}: {
  status: Status | undefined;
  onVerified: () => void;
  onStatus: (s: Status) => void;
}) {
  const [port, setPort] = useState('9222');
  const [busy, setBusy] = useState(false);
  const [launching, setLaunching] = useState(false);
  const launch = async () => {
    setLaunching(true);
    setResult(undefined);
    try {
      const s = await api('POST', '/api/browser/launch');
      onStatus(s);
      if (!s.connected) setResult({ ok: false, text: s.reason ?? 'It did not start.' });
    } catch (err) {
      setResult({ ok: false, text: describe(err) });
    } finally {
      setLaunching(false);
    }
  };
  const [result, setResult] = useState<{ ok: boolean; text: string } | undefined>();
  const verify = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setResult(undefined);
    try {
      const r = await api('POST', '/api/browser/verify', {
        body: port.trim() ? { port: Number(port) } : {},
      });
      setResult(
        r.ok
          ? {
              ok: true,
              text: `Connected to ${r.browser} ${r.version} (${r.tabs?.length ?? 0} tabs)${r.saved ? '; saved as the browser to use' : ''}.`,
            }
          : { ok: false, text: r.error ?? 'It did not connect.' },
      );
      if (r.ok) onVerified();
    } catch (err) {
      setResult({ ok: false, text: describe(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card stack" aria-labelledby="browser-status-title" data-testid="browser-status">
      <h2 id="browser-status-title">Connection</h2>
      {!status && <p class="loading">Loading…</p>}
      {status && (
        <p role="status" data-testid="browser-connection">
          <span class={`chip status-${status.connected ? 'connected' : 'error'}`}>
            {status.connected ? 'connected' : 'not connected'}
          </span>{' '}
          {status.connected
            ? `${status.browser} ${status.version} at ${status.endpoint}${status.mode === 'launch' ? ' (started by svc)' : ''}`
            : status.configured
              ? status.reason
              : 'No browser yet. Let svc start a headless Chromium of its own, or start your Chrome or Chromium with --remote-debugging-port=9222 and verify its port below.'}
        </p>
      )}
      {status && status.mode !== 'launch' && (
        <div>
          <button type="button" disabled={launching} onClick={() => void launch()}>
            {launching ? 'Starting…' : 'Start a headless Chromium for me'}
          </button>
        </div>
      )}
      {status?.connected && status.tabs.length > 0 && (
        <details>
          <summary>
            {status.tabs.length} open tab{status.tabs.length === 1 ? '' : 's'}
          </summary>
          <ul class="plain">
            {status.tabs.map((t) => (
              <li key={t.index}>
                {t.title || '(no title)'} <span class="muted small">{t.url}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      <form class="row" onSubmit={verify}>
        <label class="field">
          {browserVerifyLabels.port}{' '}
          <input
            inputMode="numeric"
            pattern="[0-9]{1,5}"
            value={port}
            onInput={(e) => setPort((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      {result && (
        <p
          class={result.ok ? 'small' : 'error small'}
          role={result.ok ? 'status' : 'alert'}
          data-testid="verify-result"
        >
          {result.text}
        </p>
      )}
    </section>
  );
}

function RecordingCard({
  r,
  onEdit,
  onDelete,
  onError,
}: {
  r: RecordingSummary;
  onEdit: () => void;
  onDelete: () => void;
  onError: (m: string) => void;
}) {
  const [steps, setSteps] = useState<Step[] | undefined>();
  const [values, setValues] = useState<Record<string, string>>({});
  const showSteps = async (open: boolean) => {
    if (!open || steps) return;
    try {
      const one = await api('GET', '/api/browser/recordings/{name}', recording(r.name));
      setSteps(one.recording?.steps ?? []);
    } catch (err) {
      onError(describe(err));
    }
  };
  /** A new chat whose first message asks the agent to replay this recording with these values. */
  const replay = async () => {
    try {
      const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ''));
      const s = await api('POST', '/api/sessions');
      upsertSession(s);
      queueFirstMessage(
        s.id,
        `Replay the browser recording "${r.name}" with the browser_replay tool${Object.keys(given).length ? `, params ${JSON.stringify(given)}` : ''}, and tell me how it went.`,
        [],
      );
      go(`chat/${s.id}`);
    } catch (err) {
      onError(describe(err));
    }
  };
  return (
    <li class="card stack" data-testid="recording" data-name={r.name}>
      <div class="row">
        <div class="grow">
          <strong>{r.name}</strong>{' '}
          <span class="muted small">
            {r.valid ? `${r.steps} step${r.steps === 1 ? '' : 's'}` : 'invalid'}
          </span>
          <div class="muted small">{r.valid ? r.description : r.error}</div>
        </div>
        <div class="actions">
          <button type="button" class="primary" disabled={!r.valid} onClick={() => void replay()}>
            Replay in a new chat
          </button>
          <button type="button" onClick={onEdit}>
            Edit
          </button>
          <button type="button" class="danger" onClick={onDelete}>
            Delete
          </button>
        </div>
      </div>
      {r.params.length > 0 && (
        <div class="row">
          {r.params.map((p) => (
            <label key={p.name} class="field">
              {p.name}
              <input
                placeholder={p.default ?? ''}
                title={p.description ?? ''}
                value={values[p.name] ?? ''}
                onInput={(e) =>
                  setValues({ ...values, [p.name]: (e.target as HTMLInputElement).value })
                }
              />
            </label>
          ))}
        </div>
      )}
      <details onToggle={(e) => void showSteps((e.target as HTMLDetailsElement).open)}>
        <summary>Steps</summary>
        <ol data-testid="recording-steps">
          {steps?.map((s, i) => (
            <li key={i}>
              <code>{s.action}</code> {s.target && <span>{s.target}</span>}{' '}
              {s.value !== undefined && <span class="muted">{s.value}</span>}
            </li>
          ))}
        </ol>
      </details>
    </li>
  );
}

function Editor({
  initial,
  onClose,
  onSaved,
}: {
  initial: { name: string; yaml: string; isNew: boolean };
  onClose: () => void;
  onSaved: (name: string) => void;
}) {
  const [name, setName] = useState(initial.name);
  const [yaml, setYaml] = useState(initial.yaml);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [error, setError] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  /** Puts the caret on an issue's line, so the user sees where it is. */
  const toLine = (line: number | null) => {
    const el = area.current;
    if (!el || line === null) return;
    const lines = el.value.split('\n');
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setIssues([]);
    setError('');
    try {
      await api('PUT', '/api/browser/recordings/{name}', {
        ...recording(name.trim()),
        body: { yaml },
      });
      onSaved(name.trim());
    } catch (err) {
      const details =
        err instanceof ApiError && Array.isArray(err.details)
          ? (err.details as Issue[]).filter((d) => typeof d.message === 'string')
          : [];
      if (details.length > 0 && details.some((d) => 'line' in d)) setIssues(details);
      else setError(describe(err));
    }
  };
  return (
    <form
      class="card stack"
      onSubmit={save}
      aria-labelledby="recording-edit-title"
      data-testid="recording-editor"
    >
      <h3 id="recording-edit-title">{initial.isNew ? 'New recording' : `Edit ${initial.name}`}</h3>
      <label class="field">
        Name{' '}
        <input
          required
          readOnly={!initial.isNew}
          pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,63}"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
      </label>
      <label class="field">
        YAML{' '}
        <textarea
          ref={area}
          rows={16}
          spellcheck={false}
          class="mono"
          value={yaml}
          onInput={(e) => setYaml((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {issues.length > 0 && (
        <ul class="error small" role="alert" data-testid="recording-issues">
          {issues.map((i, k) => (
            <li key={k}>
              {i.line !== null ? (
                <button type="button" class="link" onClick={() => toLine(i.line)}>
                  Line {i.line}, column {i.column}
                </button>
              ) : null}
              {i.line !== null ? ': ' : ''}
              {i.message}
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary">
          Save
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
