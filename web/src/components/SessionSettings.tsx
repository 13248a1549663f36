import { useEffect, useState } from 'preact/hooks';
import { api, type BodyOf, describe, needsKey } from '../lib/api';
import type { ModelEntry, Session } from '../lib/types';
import { KeyUnlock } from './KeyUnlock';

type Patch = BodyOf<'PATCH', '/api/sessions/{id}'>;
const efforts: Array<NonNullable<Patch['reasoning_effort']>> = [
  'off',
  'low',
  'medium',
  'high',
  'xhigh',
  'max',
];
const modes: Array<[NonNullable<Patch['permission_mode']>, string]> = [
  ['interactive', 'Interactive: ask before risky tools'],
  ['auto', 'Auto: allow what the rules allow'],
  ['strict', 'Strict: deny whatever would ask'],
];

type NetChoice = 'default' | 'on' | 'off' | 'hosts';
const netChoice = (n: Session['network']): NetChoice =>
  n == null ? 'default' : Array.isArray(n) ? 'hosts' : n === 'off' ? 'off' : 'on';
const hostsText = (n: Session['network']): string => (Array.isArray(n) ? n.join(' ') : '');

/** The option of a select's list its value names (undefined for any other value). */
const picked = <T extends string>(list: readonly T[], value: string): T | undefined =>
  list.find((x) => x === value);

/** The sandbox network as the API takes it; hosts are separated by spaces or commas. */
function networkValue(choice: NetChoice, hosts: string): Patch['network'] {
  if (choice === 'default') return null;
  if (choice === 'hosts') return hosts.split(/[\s,]+/).filter(Boolean);
  return choice;
}

/** A chat's settings: title, model, reasoning effort, showing reasoning, permission mode, folder, sandbox network. */
export function SessionSettings({
  session,
  onSaved,
  onDirty,
}: {
  session: Session;
  onSaved: (s: Session) => void;
  onDirty?: (dirty: boolean) => void;
}) {
  const initial = () => ({
    ...session,
    working_dir: session.working_dir ?? '',
    net: netChoice(session.network),
    hosts: hostsText(session.network),
  });
  const [f, setF] = useState(initial);
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [state, setState] = useState<{
    busy?: boolean;
    error?: string;
    saved?: boolean;
    /** The server wants the key for this change (it widens the agent's rights); rejected after a key was given. */
    key?: { rejected: boolean };
  }>({});

  useEffect(() => setF(initial()), [session.id, session.updated_at]);
  useEffect(() => {
    api('GET', '/api/config/models').then(
      (r) => setModels(r.items),
      () => setModels([]),
    );
  }, []);

  const changes = (): Patch => {
    const patch: Patch = {};
    if (f.title.trim() !== session.title) patch.title = f.title.trim();
    if ((f.model_id || null) !== session.model_id) patch.model_id = f.model_id || null;
    const effort = picked(efforts, f.reasoning_effort);
    if (effort && effort !== session.reasoning_effort) patch.reasoning_effort = effort;
    if (f.show_reasoning !== session.show_reasoning) patch.show_reasoning = f.show_reasoning;
    const mode = picked(
      modes.map(([m]) => m),
      f.permission_mode,
    );
    if (mode && mode !== session.permission_mode) patch.permission_mode = mode;
    const net = networkValue(f.net, f.hosts);
    if (JSON.stringify(net) !== JSON.stringify(session.network ?? null)) patch.network = net;
    const dir = f.working_dir.trim() || null;
    if (dir !== session.working_dir) patch.working_dir = dir;
    return patch;
  };
  const dirty = Object.keys(changes()).length > 0;
  useEffect(() => onDirty?.(dirty), [dirty]);

  const store = async (afterKey: boolean) => {
    const patch = changes();
    if (Object.keys(patch).length === 0) return setState({ saved: true });
    setState({ busy: true });
    try {
      onSaved(
        await api('PATCH', '/api/sessions/{id}', { params: { id: session.id }, body: patch }),
      );
      setState({ saved: true });
    } catch (err) {
      setState(needsKey(err) ? { key: { rejected: afterKey } } : { error: describe(err) });
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    void store(false);
  };

  const set = (k: string, v: unknown) => {
    setF((x) => ({ ...x, [k]: v }));
    setState({});
  };
  return (
    <form class="stack" onSubmit={save} data-testid="session-settings">
      <label class="field">
        <span>Title</span>
        <input
          value={f.title}
          onInput={(e) => set('title', e.currentTarget.value)}
          maxLength={200}
        />
      </label>
      <label class="field">
        <span>Model</span>
        <select
          value={f.model_id ?? ''}
          onChange={(e) => set('model_id', e.currentTarget.value || null)}
        >
          <option value="">The default slot</option>
          {models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id} ({m.provider} · {m.model})
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>Reasoning effort</span>
        <select
          value={f.reasoning_effort}
          onChange={(e) => set('reasoning_effort', e.currentTarget.value)}
        >
          {efforts.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={f.show_reasoning}
          onChange={(e) => set('show_reasoning', e.currentTarget.checked)}
        />
        <span>Show the model's reasoning</span>
      </label>
      <label class="field">
        <span>Permission mode</span>
        <select
          value={f.permission_mode}
          onChange={(e) => set('permission_mode', e.currentTarget.value)}
          data-testid="permission-mode"
        >
          {modes.map(([v, label]) => (
            <option key={v} value={v}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>Working folder</span>
        <input
          value={f.working_dir}
          placeholder="/absolute/path (empty: none)"
          onInput={(e) => set('working_dir', e.currentTarget.value)}
          spellcheck={false}
        />
      </label>
      <label class="field">
        <span>Network for commands (sandbox)</span>
        <select
          value={f.net}
          onChange={(e) => set('net', e.currentTarget.value)}
          data-testid="sandbox-network"
        >
          <option value="default">Default (permissions.yml, else on)</option>
          <option value="on">On</option>
          <option value="off">Off</option>
          <option value="hosts">Only these hosts (through a proxy)</option>
        </select>
      </label>
      {f.net === 'hosts' && (
        <label class="field">
          <span>Hosts</span>
          <input
            value={f.hosts}
            placeholder="registry.npmjs.org *.github.com"
            onInput={(e) => set('hosts', e.currentTarget.value)}
            spellcheck={false}
            data-testid="sandbox-hosts"
          />
        </label>
      )}
      {state.error && (
        <p class="error small" role="alert">
          {state.error}
        </p>
      )}
      {state.key && (
        <KeyUnlock
          what="Letting this chat's agent do more"
          rejected={state.key.rejected}
          onUnlocked={() => store(true)}
        />
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={state.busy}>
          Save
        </button>
        {state.saved && <span class="ok small">Saved.</span>}
      </div>
    </form>
  );
}
