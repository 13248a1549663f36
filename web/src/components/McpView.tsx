import { useEffect, useState } from 'preact/hooks';
import { api, type BodyOf, describe } from '../lib/api';
import type { Schemas } from '../lib/types';
import { when } from '../lib/format';
import { live } from '../lib/live';
import { toast } from '../lib/toast';
import { action } from '../lib/action';
import { McpOffers, server } from './McpOffers';
import { mcpServerLabels as L } from '../../../src/shared/form-labels';

type McpServerView = Schemas['McpServer'];

/** `KEY=VALUE` (env) or `Name: value` (headers) lines into an object; blank lines are skipped. */
function pairs(text: string, sep: '=' | ':'): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(sep);
    if (i <= 0)
      throw new Error(
        `"${line.trim().slice(0, 40)}" is not a ${sep === '=' ? 'KEY=VALUE' : 'Name: value'} line.`,
      );
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The MCP page: every server with its live status (the `mcp` topic), error text and tools;
 * enable, disable, reconnect, delete (to the trash); add one with a form, or paste an
 * `{"mcpServers": {…}}` document from another MCP client. Secret values are write-only.
 */
export function McpView() {
  const [servers, setServers] = useState<McpServerView[] | undefined>();
  const [error, setError] = useState('');
  const load = () =>
    api('GET', '/api/mcp/servers').then(
      (r) => {
        setServers(r.servers);
        setError('');
      },
      (err) => setError(describe(err)),
    );
  useEffect(() => {
    void load();
    return live.on('mcp', () => void load());
  }, []);

  /** OAuth: svc answers where the authorization server is; it sends the browser back to svc, then here. */
  const signIn = (name: string) =>
    act(async () => {
      const r = await api('POST', '/api/mcp/servers/{name}/oauth/start', {
        params: server(name),
        body: { origin: location.origin },
      });
      if (r.authorization_url) location.assign(r.authorization_url);
      else toast(`Signed in to "${name}" again.`);
    });

  const act = action(load, setError);

  return (
    <div class="page stack" data-testid="mcp-view">
      <h1 class="page-title">MCP servers</h1>
      <p class="muted">
        Tools of connected servers reach the agent as mcp__&lt;server&gt;__&lt;tool&gt; and ask
        before they run unless permissions.yml allows them.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {!servers && !error && <p class="loading">Loading…</p>}
      {servers?.length === 0 && <p class="empty-state">No MCP server yet: add one below.</p>}
      <ul class="plain stack" aria-label="MCP servers">
        {servers?.map((s) => (
          <li key={s.name} class="card stack" data-testid="mcp-server" data-name={s.name}>
            <div class="row">
              <div class="grow">
                <strong>{s.name}</strong>{' '}
                <span class="chip">{s.transport === 'stdio' ? 'local' : 'remote'}</span>{' '}
                <span class={`chip status-${s.status}`} role="status" data-testid="mcp-status">
                  {s.status}
                </span>
                <div class="muted small">
                  {s.transport === 'stdio' ? [s.command, ...(s.args ?? [])].join(' ') : s.url}
                  {s.connected_at &&
                    ` · connected ${when(s.connected_at)}${s.connected_via ? ` over ${s.connected_via.replace('_', ' ')}` : ''}`}
                  {(s.env_names.length > 0 || s.header_names.length > 0) &&
                    ` · secrets set: ${[...s.env_names, ...s.header_names].join(', ')}`}
                </div>
              </div>
              <div class="actions">
                {s.needs_auth && (
                  <button type="button" class="primary" onClick={() => signIn(s.name)}>
                    Sign in
                  </button>
                )}
                <button
                  type="button"
                  onClick={() =>
                    act(() =>
                      api('PATCH', '/api/mcp/servers/{name}', {
                        params: server(s.name),
                        body: { enabled: !s.enabled },
                      }),
                    )
                  }
                >
                  {s.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  disabled={!s.enabled}
                  onClick={() =>
                    act(() =>
                      api('POST', '/api/mcp/servers/{name}/reconnect', { params: server(s.name) }),
                    )
                  }
                >
                  Reconnect
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    act(
                      () => api('DELETE', '/api/mcp/servers/{name}', { params: server(s.name) }),
                      `Moved "${s.name}" to the trash.`,
                    )
                  }
                >
                  Delete
                </button>
              </div>
            </div>
            {s.error && (
              <p class="error small" data-testid="mcp-error">
                {s.error}
              </p>
            )}
            {s.stderr_tail && (
              <details data-testid="mcp-stderr">
                <summary>What it wrote to stderr (last lines)</summary>
                <pre class="small">{s.stderr_tail}</pre>
              </details>
            )}
            {s.status === 'connected' && <McpOffers name={s.name} />}
            {s.tools.length > 0 && (
              <details>
                <summary>
                  {s.tools.length} tool{s.tools.length === 1 ? '' : 's'}
                </summary>
                <ul class="plain">
                  {s.tools.map((t) => (
                    <li key={t.name}>
                      <code>{t.name}</code>{' '}
                      <span class="muted small">{t.description.split('\n')[0]}</span>
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ul>
      <AddServer onAdded={(msg) => act(async () => undefined, msg)} />
    </div>
  );
}

function AddServer({ onAdded }: { onAdded: (message: string) => void }) {
  const [kind, setKind] = useState<'local' | 'remote' | 'paste'>('local');
  const [f, setF] = useState({
    name: '',
    command: '',
    args: '',
    env: '',
    url: '',
    headers: '',
    doc: '',
  });
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const field = (key: keyof typeof f) => ({
    value: f[key],
    onInput: (e: Event) => setF({ ...f, [key]: (e.target as HTMLInputElement).value }),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      let body: BodyOf<'POST', '/api/mcp/servers'>;
      if (kind === 'paste') {
        try {
          // Pasted as it is: the server checks it and names what is wrong.
          body = JSON.parse(f.doc) as BodyOf<'POST', '/api/mcp/servers'>;
        } catch {
          throw new Error('The pasted text is not valid JSON.');
        }
      } else if (kind === 'local') {
        body = {
          name: f.name.trim(),
          command: f.command.trim(),
          args: f.args.split('\n').filter((a) => a.trim() !== ''),
          env: pairs(f.env, '='),
        };
      } else body = { name: f.name.trim(), url: f.url.trim(), headers: pairs(f.headers, ':') };
      await api('POST', '/api/mcp/servers', { body });
      setF({ name: '', command: '', args: '', env: '', url: '', headers: '', doc: '' });
      onAdded(
        kind === 'paste' ? 'Imported the servers.' : `Added "${(body as { name: string }).name}".`,
      );
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="card stack"
      onSubmit={submit}
      aria-labelledby="mcp-add-title"
      data-testid="mcp-add"
    >
      <h2 id="mcp-add-title">Add a server</h2>
      <fieldset class="segmented" data-testid="mcp-kind">
        <legend class="sr-only">Kind of server</legend>
        {(
          [
            ['local', 'Local'],
            ['remote', 'Remote'],
            ['paste', 'Paste JSON'],
          ] as const
        ).map(([k, label]) => (
          <label key={k}>
            <input type="radio" name="mcp-kind" checked={kind === k} onChange={() => setKind(k)} />
            {label}
          </label>
        ))}
      </fieldset>
      <p class="muted small" data-testid="mcp-kind-help">
        {kind === 'local' && 'svc starts the server as a program (a command) on this machine.'}
        {kind === 'remote' && 'svc connects to a server that runs elsewhere, by its URL.'}
        {kind === 'paste' &&
          'An {"mcpServers": {…}} document from another MCP client (Claude Desktop, Cursor…).'}
      </p>
      {kind !== 'paste' && (
        <label class="field">
          {L.name} <input required pattern="[A-Za-z0-9_\-]{1,64}" {...field('name')} />
        </label>
      )}
      {kind === 'local' && (
        <>
          <label class="field">
            {L.command} <input required placeholder="npx" {...field('command')} />
          </label>
          <label class="field">
            {L.args}, one a line <textarea rows={3} {...field('args')} />
          </label>
          <label class="field">
            {L.env}, KEY=VALUE lines (values are never shown again){' '}
            <textarea rows={2} {...field('env')} />
          </label>
        </>
      )}
      {kind === 'remote' && (
        <>
          <label class="field">
            {L.url}{' '}
            <input required type="url" placeholder="https://example.com/mcp" {...field('url')} />
          </label>
          <label class="field">
            {L.headers}, Name: value lines (values are never shown again){' '}
            <textarea rows={2} {...field('headers')} />
          </label>
        </>
      )}
      {kind === 'paste' && (
        <label class="field">
          An {'{"mcpServers": {…}}'} document (all servers are added, or none){' '}
          <textarea required rows={8} {...field('doc')} />
        </label>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" class="primary" disabled={busy}>
          {kind === 'paste' ? 'Import' : 'Add'}
        </button>
      </div>
    </form>
  );
}
