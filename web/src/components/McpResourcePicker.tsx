import { useRef, useState } from 'preact/hooks';
import type { McpResourceRef } from '../lib/chat';
import { Modal } from './Modal';
import { resourcesOf, useConnectedOffers, type Resource } from './McpOffers';

/** A resource chosen to go with the message, with the name the chip shows. */
export interface PickedResource extends McpResourceRef {
  label: string;
}

interface Choice {
  server: string;
  resource: Resource;
}

/**
 * Attaches a resource an MCP server offers to the next message: the agent worker reads it when
 * the turn starts and the model gets its contents with the message (text inline, up to 32 KB).
 */
export function McpResourcePicker({
  onPick,
  onClose,
}: {
  onPick: (r: PickedResource) => void;
  onClose: () => void;
}) {
  const { offers, error } = useConnectedOffers(resourcesOf);
  const choices: Choice[] | undefined = offers?.map(({ server, item }) => ({
    server,
    resource: item,
  }));
  const [chosen, setChosen] = useState('');
  const list = useRef<HTMLSelectElement>(null);

  const key = (c: Choice) => `${c.server} ${c.resource.uri}`;
  const attach = (e: Event) => {
    e.preventDefault();
    const c = choices?.find((x) => key(x) === chosen);
    if (!c) return;
    onPick({
      server: c.server,
      uri: c.resource.uri,
      label: `${c.server}: ${c.resource.title ?? c.resource.name}`,
    });
  };

  return (
    <Modal
      labelledBy="mcp-resource-title"
      describedBy="mcp-resource-desc"
      onClose={onClose}
      initialFocus={list}
      testId="mcp-resource-picker"
    >
      <form class="stack" onSubmit={attach}>
        <h2 id="mcp-resource-title">Attach an MCP resource</h2>
        <p id="mcp-resource-desc" class="muted">
          The agent reads it when the message is sent and gets its contents with it.
        </p>
        {!choices && <p class="loading">Loading…</p>}
        {choices?.length === 0 && !error && (
          <p class="muted">No connected MCP server offers resources.</p>
        )}
        {choices && choices.length > 0 && (
          <label class="field">
            Resource
            <select
              ref={list}
              required
              value={chosen}
              onChange={(e) => setChosen(e.currentTarget.value)}
            >
              <option value="" disabled>
                Choose a resource
              </option>
              {choices.map((c) => (
                <option key={key(c)} value={key(c)}>
                  {c.server}: {c.resource.title ?? c.resource.name} ({c.resource.uri})
                </option>
              ))}
            </select>
          </label>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={!chosen}>
            Attach
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
