import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe, needsKey } from '../lib/api';
import { KeyUnlock } from './KeyUnlock';

type Catalog = Answer<'GET', '/api/tools'>;
type Tool = Catalog['items'][number];
type Permission = Tool['permission'];

interface Param {
  type?: unknown;
  description?: string;
}

/**
 * The tools the agent can use: what each is for, in words for a person, and its permission
 * default with a switch (allow without asking, or ask first) that writes permissions.yml through
 * the API. What the model reads (its description and parameters) is one click further.
 */
export function ToolsPanel() {
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    api('GET', '/api/tools').then(setCatalog, (err) => setError(describe(err)));
  }, []);
  const changed = (name: string, permission: Permission) =>
    setCatalog(
      (c) =>
        c && {
          ...c,
          items: c.items.map((t) => (t.name === name ? { ...t, permission } : t)),
        },
    );
  return (
    <section class="stack" data-testid="tools-panel" aria-labelledby="tools-title">
      <h2 id="tools-title">Tools</h2>
      <p class="muted">
        What the agent can use. A tool that is allowed runs without asking when no rule decides;
        otherwise it asks you first. Hard limits and the built-in rules (network tools, sudo,
        secrets…) still ask or refuse whatever the switch says.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {catalog?.rules_problem && (
        <p class="error" role="alert" data-testid="rules-problem">
          {catalog.rules_problem}
        </p>
      )}
      {!catalog && !error && <p class="loading">Loading…</p>}
      <ul class="plain stack" aria-label="Tools">
        {catalog?.items.map((t) => (
          <ToolRow
            key={t.name}
            tool={t}
            frozen={catalog.rules_problem !== null}
            onChanged={(p) => changed(t.name, p)}
          />
        ))}
      </ul>
    </section>
  );
}

function ToolRow({
  tool: t,
  frozen,
  onChanged,
}: {
  tool: Tool;
  frozen: boolean;
  onChanged: (p: Permission) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [key, setKey] = useState<{ rejected: boolean; want: 'allow' | 'ask' } | undefined>();
  const p = t.permission;
  const switchId = `tool-allow-${t.name}`;

  const store = async (want: 'allow' | 'ask', afterKey = false) => {
    setBusy(true);
    setError('');
    try {
      onChanged(
        await api('PUT', '/api/tools/{name}/permission', {
          params: { name: t.name },
          body: { default: want },
        }),
      );
      setKey(undefined);
    } catch (err) {
      if (needsKey(err)) setKey({ rejected: afterKey, want });
      else setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  const props = Object.entries((t.parameters.properties ?? {}) as Record<string, Param>);
  const required = Array.isArray(t.parameters.required) ? (t.parameters.required as string[]) : [];
  return (
    <li class="card stack tool-info" data-testid="tool-info" data-name={t.name}>
      <div class="tool-row">
        <div class="grow">
          <strong>
            <code>{t.name}</code>
          </strong>
          <p class="tool-purpose" data-testid="tool-purpose" id={`${switchId}-purpose`}>
            {t.purpose}
          </p>
        </div>
        <div class="stack">
          <label class="switch">
            <input
              type="checkbox"
              role="switch"
              id={switchId}
              checked={p.default === 'allow'}
              disabled={busy || frozen || p.locked !== null || p.default === 'deny'}
              aria-describedby={`${switchId}-state`}
              onChange={(e) => void store(e.currentTarget.checked ? 'allow' : 'ask')}
            />
            Allow without asking
          </label>
          <span class="muted small" id={`${switchId}-state`} data-testid="tool-default">
            {p.locked ??
              (p.default === 'deny'
                ? 'Refused: your permissions.yml denies it by default.'
                : `${p.default === 'allow' ? 'Runs without asking' : 'Asks first'}${
                    p.source === 'permissions.yml' ? ' (set in permissions.yml)' : ''
                  }.`)}
          </span>
        </div>
      </div>
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
      {key && (
        <KeyUnlock
          what={`Letting ${t.name} run without asking`}
          rejected={key.rejected}
          onUnlocked={() => store(key.want, true)}
        />
      )}
      <details>
        <summary>What the model reads</summary>
        <p class="small pre-line">{t.description}</p>
        {props.length > 0 ? (
          <table class="params">
            <tbody>
              {props.map(([name, param]) => (
                <tr key={name}>
                  <td>
                    <code>{name}</code>
                    {required.includes(name) ? ' *' : ''}
                  </td>
                  <td class="muted">
                    {Array.isArray(param.type) ? param.type.join(' | ') : String(param.type ?? '')}
                  </td>
                  <td>{param.description ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted small">No parameters.</p>
        )}
      </details>
    </li>
  );
}
