import { useEffect, useState } from 'preact/hooks';
import { describe, get } from '../lib/api';

interface Tool {
  name: string;
  description: string;
  parameters?: {
    properties?: Record<string, { type?: unknown; description?: string }>;
    required?: string[];
  };
}

/** The tools the agent can use, with their parameters. */
export function ToolsPanel() {
  const [tools, setTools] = useState<Tool[] | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    get<{ items: Tool[] }>('/api/tools').then(
      (r) => setTools(r.items),
      (err) => setError(describe(err)),
    );
  }, []);
  return (
    <section class="stack" data-testid="tools-panel">
      <h2>Tools</h2>
      {error && <p class="error">{error}</p>}
      {!tools && !error && <p class="loading">Loading…</p>}
      {tools?.map((t) => {
        const props = Object.entries(t.parameters?.properties ?? {});
        return (
          <details key={t.name} class="card tool-info" data-testid="tool-info">
            <summary>
              <code>{t.name}</code> <span class="muted">{t.description.split('\n')[0]}</span>
            </summary>
            <p>{t.description}</p>
            {props.length > 0 ? (
              <table class="params">
                <tbody>
                  {props.map(([name, p]) => (
                    <tr key={name}>
                      <td>
                        <code>{name}</code>
                        {t.parameters?.required?.includes(name) ? ' *' : ''}
                      </td>
                      <td class="muted">
                        {Array.isArray(p.type) ? p.type.join(' | ') : String(p.type ?? '')}
                      </td>
                      <td>{p.description ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : (
              <p class="muted small">No parameters.</p>
            )}
          </details>
        );
      })}
    </section>
  );
}
