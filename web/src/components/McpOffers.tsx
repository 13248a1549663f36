import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A server's name as a path parameter; names are checked before they go into one. */
export const server = (name: string) => {
  if (!NAME.test(name)) throw new Error(`"${name}" is not a valid server name.`);
  return { name };
};

type Listed = Answer<'GET', '/api/mcp/servers/{name}/resources'>;
export type Resource = Listed['resources'][number];
type Template = Listed['templates'][number];
export type Prompt = Answer<'GET', '/api/mcp/servers/{name}/prompts'>['prompts'][number];
interface Offers {
  resources: Resource[];
  templates: Template[];
  prompts: Prompt[];
}

/** What every connected server offers of one kind (a server that cannot list it is left out). */
export async function fromConnected<T>(
  list: (server: string) => Promise<T[]>,
): Promise<Array<{ server: string; item: T }>> {
  const { servers } = await api('GET', '/api/mcp/servers');
  const connected = servers.filter((s) => s.status === 'connected').map((s) => s.name);
  const lists = await Promise.allSettled(connected.map((n) => list(n)));
  return lists.flatMap((r, i) =>
    r.status === 'fulfilled' ? r.value.map((item) => ({ server: connected[i]!, item })) : [],
  );
}

/** The pickers' list: `fromConnected` loaded once when the picker opens; a failure says why. */
export function useConnectedOffers<T>(list: (server: string) => Promise<T[]>) {
  const [offers, setOffers] = useState<Array<{ server: string; item: T }> | undefined>();
  const [error, setError] = useState('');
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per opening
  useEffect(() => {
    fromConnected(list).then(setOffers, (err: unknown) => {
      setError(describe(err));
      setOffers([]);
    });
  }, []);
  return { offers, error, setError };
}

/** A server's resources (GET …/resources), for the composer's picker. */
export const resourcesOf = (name: string) =>
  api('GET', '/api/mcp/servers/{name}/resources', { params: server(name) }).then(
    (r) => r.resources,
  );

/** A server's prompts (GET …/prompts), for the MCP page and the composer's picker. */
export const promptsOf = (name: string) =>
  api('GET', '/api/mcp/servers/{name}/prompts', { params: server(name) }).then((r) => r.prompts);

/**
 * What a connected server offers besides tools: its resources, resource templates and prompts,
 * asked of the server when the person opens the list (not on every status change).
 */
export function McpOffers({ name }: { name: string }) {
  const [offers, setOffers] = useState<Offers | undefined>();
  const [error, setError] = useState('');
  const load = async () => {
    if (offers) return;
    try {
      const [r, prompts] = await Promise.all([
        api('GET', '/api/mcp/servers/{name}/resources', { params: server(name) }),
        promptsOf(name),
      ]);
      setOffers({ resources: r.resources, templates: r.templates, prompts });
    } catch (err) {
      setError(describe(err));
    }
  };
  return (
    <details data-testid="mcp-offers" onToggle={(e) => e.currentTarget.open && void load()}>
      <summary>Resources and prompts</summary>
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
      {!offers && !error && <p class="loading small">Loading…</p>}
      {offers && (
        <div class="stack">
          {offers.resources.length + offers.templates.length + offers.prompts.length === 0 && (
            <p class="muted small">This server offers no resources or prompts.</p>
          )}
          {offers.resources.length > 0 && (
            <section aria-label={`Resources of ${name}`}>
              <h3 class="small">Resources</h3>
              <ul class="plain" data-testid="mcp-resources">
                {offers.resources.map((r) => (
                  <li key={r.uri}>
                    <strong>{r.title ?? r.name}</strong> <code class="small">{r.uri}</code>{' '}
                    <span class="muted small">
                      {[r.mime_type, r.description].filter(Boolean).join(' · ')}
                    </span>
                  </li>
                ))}
                {offers.templates.map((t) => (
                  <li key={t.uri_template}>
                    <strong>{t.name}</strong> <code class="small">{t.uri_template}</code>{' '}
                    <span class="muted small">
                      template{t.description ? ` · ${t.description}` : ''}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          )}
          {offers.prompts.length > 0 && (
            <section aria-label={`Prompts of ${name}`}>
              <h3 class="small">Prompts (the chat's Prompts button uses them)</h3>
              <ul class="plain" data-testid="mcp-prompts">
                {offers.prompts.map((p) => (
                  <li key={p.name}>
                    <strong>{p.title ?? p.name}</strong>{' '}
                    <span class="muted small">
                      {p.description ?? ''}
                      {p.arguments.length > 0 &&
                        ` (${p.arguments.map((a) => (a.required ? a.name : `${a.name}?`)).join(', ')})`}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      )}
    </details>
  );
}
