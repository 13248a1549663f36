import { useState } from 'preact/hooks';
import type { ToolLive } from '../lib/chat';
import { Icon } from './Icon';

const SHOW = 4000;

function pretty(args: string | undefined): string {
  if (!args) return '';
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** One tool call: its name and arguments, its live output while it runs, then its result. */
export function ToolCard({ name, args, live, result }: { name: string; args?: string; live?: ToolLive; result?: { output: string; is_error: boolean } }) {
  const [all, setAll] = useState(false);
  const status = result ? (result.is_error ? 'error' : 'done') : 'running';
  const shownArgs = pretty(args);
  const output = result ? result.output : live?.output ?? '';
  const long = output.length > SHOW && !all;
  return (
    <div class={`tool-card ${status}`} data-testid="tool-card" data-status={status} data-tool={name}>
      <div class="tool-head">
        <span class="tool-icon">
          <Icon name={status === 'running' ? 'spin' : status === 'error' ? 'alert' : 'check'} />
        </span>
        <span class="tool-name">{name}</span>
        <span class="muted small">{status === 'running' ? 'running…' : status === 'error' ? 'failed' : 'done'}</span>
      </div>
      {shownArgs && shownArgs !== '{}' && (
        <details class="tool-args">
          <summary>Arguments</summary>
          <pre>{shownArgs}</pre>
        </details>
      )}
      {output && (
        <pre class="tool-output" data-testid="tool-output">
          {long ? (status === 'running' ? `…\n${output.slice(-SHOW)}` : `${output.slice(0, SHOW)}\n…`) : output}
        </pre>
      )}
      {long && (
        <button type="button" class="link" onClick={() => setAll(true)}>
          Show all {output.length} characters
        </button>
      )}
    </div>
  );
}
