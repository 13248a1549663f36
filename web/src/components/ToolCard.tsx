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

type Status = 'waiting' | 'running' | 'done' | 'exited' | 'error';

/** A command's exit code from the terminal tool's last line (`[exit code 7]`); 0 when none is given. */
function exitCode(name: string, output: string): number {
  if (name !== 'terminal') return 0;
  const m = /\[exit code (\d+)\]\s*$/.exec(output);
  return m ? Number(m[1]) : 0;
}

/**
 * One tool call: its name and arguments, its live output while it runs, then its result. A call
 * waiting for approval says so; a command that exited non-zero says with which code (not "done").
 */
export function ToolCard({
  name,
  args,
  live,
  result,
  waiting = false,
}: {
  name: string;
  args?: string;
  live?: ToolLive;
  result?: { output: string; is_error: boolean };
  waiting?: boolean;
}) {
  const [all, setAll] = useState(false);
  const code = result && !result.is_error ? exitCode(name, result.output) : 0;
  const status: Status = result
    ? result.is_error
      ? 'error'
      : code !== 0
        ? 'exited'
        : 'done'
    : waiting
      ? 'waiting'
      : 'running';
  const label = {
    waiting: 'waiting for your approval',
    running: 'running…',
    done: 'done',
    exited: `exit code ${code}`,
    error: 'failed',
  }[status];
  const shownArgs = pretty(args);
  const output = result ? result.output : (live?.output ?? '');
  const long = output.length > SHOW && !all;
  return (
    <div
      class={`tool-card ${status}`}
      data-testid="tool-card"
      data-status={status}
      data-tool={name}
    >
      <div class="tool-head">
        <span class="tool-icon">
          <Icon name={status === 'running' ? 'spin' : status === 'done' ? 'check' : 'alert'} />
        </span>
        <span class="tool-name">{name}</span>
        <span class="muted small" data-testid="tool-status">
          {label}
        </span>
      </div>
      {shownArgs && shownArgs !== '{}' && (
        <details class="tool-args">
          <summary>Arguments</summary>
          <pre>{shownArgs}</pre>
        </details>
      )}
      {output && (
        <pre class="tool-output" data-testid="tool-output">
          {long
            ? status === 'running'
              ? `…\n${output.slice(-SHOW)}`
              : `${output.slice(0, SHOW)}\n…`
            : output}
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
