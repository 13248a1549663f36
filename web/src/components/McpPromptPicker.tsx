import { useRef, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import { Modal } from './Modal';
import { promptsOf, server, useConnectedOffers, type Prompt } from './McpOffers';

interface Choice {
  server: string;
  prompt: Prompt;
}

/**
 * Starts a message from a prompt an MCP server offers: pick one of every connected server's
 * prompts, fill in its arguments, and the server's text goes into the message box (not sent).
 */
export function McpPromptPicker({
  onPick,
  onClose,
}: {
  onPick: (text: string) => void;
  onClose: () => void;
}) {
  const { offers, error, setError } = useConnectedOffers(promptsOf);
  const choices: Choice[] | undefined = offers?.map(({ server, item }) => ({
    server,
    prompt: item,
  }));
  const [chosen, setChosen] = useState<Choice | undefined>();
  const [args, setArgs] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const list = useRef<HTMLSelectElement>(null);

  const use = async (e: Event) => {
    e.preventDefault();
    if (!chosen) return;
    setBusy(true);
    setError('');
    try {
      const r = await api('POST', '/api/mcp/servers/{name}/prompts/{prompt}/get', {
        params: { ...server(chosen.server), prompt: chosen.prompt.name },
        body: {
          arguments: Object.fromEntries(Object.entries(args).filter(([, v]) => v !== '')),
        },
      });
      onPick(r.text);
    } catch (err) {
      setError(describe(err));
      setBusy(false);
    }
  };

  const key = (c: Choice) => `${c.server}/${c.prompt.name}`;
  return (
    <Modal
      labelledBy="mcp-prompt-title"
      describedBy="mcp-prompt-desc"
      onClose={() => !busy && onClose()}
      initialFocus={list}
      testId="mcp-prompt-picker"
    >
      <form class="stack" onSubmit={use}>
        <h2 id="mcp-prompt-title">Start from an MCP prompt</h2>
        <p id="mcp-prompt-desc" class="muted">
          The prompt's text goes into the message box; you can edit it before sending.
        </p>
        {!choices && <p class="loading">Loading…</p>}
        {choices?.length === 0 && !error && (
          <p class="muted">No connected MCP server offers prompts.</p>
        )}
        {choices && choices.length > 0 && (
          <label class="field">
            Prompt
            <select
              ref={list}
              required
              value={chosen ? key(chosen) : ''}
              onChange={(e) => {
                setChosen(choices.find((c) => key(c) === e.currentTarget.value));
                setArgs({});
              }}
            >
              <option value="" disabled>
                Choose a prompt
              </option>
              {choices.map((c) => (
                <option key={key(c)} value={key(c)}>
                  {c.server}: {c.prompt.title ?? c.prompt.name}
                  {c.prompt.description ? ` — ${c.prompt.description}` : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {chosen?.prompt.arguments.map((a) => (
          <label key={a.name} class="field">
            {a.name}
            {a.required ? ' (required)' : ''}
            <input
              required={a.required}
              value={args[a.name] ?? ''}
              onInput={(e) => setArgs({ ...args, [a.name]: e.currentTarget.value })}
            />
            {a.description && <span class="muted small">{a.description}</span>}
          </label>
        ))}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !chosen}>
            Use prompt
          </button>
          <button type="button" disabled={busy} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
