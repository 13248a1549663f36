import { useState } from 'preact/hooks';
import type { ToolLive } from '../lib/chat';
import { commandEnd, describeCall } from '../lib/tool-view';
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

type Status = 'waiting' | 'running' | 'done' | 'exited' | 'error' | 'stopped';

/** A tool call's result; `unfinished` when svc wrote it because the turn ended first. */
export interface CallResult {
  output: string;
  is_error: boolean;
  unfinished?: 'interrupted' | 'failed' | undefined;
}

/**
 * One tool call, as a card that folds: its headline says what ran (`$ npm test`, the file read or
 * written, the MCP server and tool with its key argument) and how it ended (a command's exit
 * status); opened, it shows the live output while the call runs, then its result, and the raw
 * arguments on request. A card of the turn in progress (or one that failed) opens by itself;
 * an older finished one stays folded, so a long chat reads as its conversation.
 */
export function ToolCard({
  name,
  args,
  live,
  result,
  waiting = false,
  current = false,
}: {
  name: string;
  args?: string;
  live?: ToolLive;
  result?: CallResult;
  waiting?: boolean;
  /** The call belongs to the turn running now (or just ended): shown open. */
  current?: boolean;
}) {
  const [all, setAll] = useState(false);
  const end =
    result && !result.is_error && name === 'terminal' ? commandEnd(result.output) : undefined;
  const status: Status = result
    ? result.unfinished
      ? 'stopped'
      : result.is_error
        ? 'error'
        : end && ('signal' in end || end.code !== 0)
          ? 'exited'
          : 'done'
    : waiting
      ? 'waiting'
      : 'running';
  const label = {
    waiting: 'waiting for your approval',
    running: 'running…',
    done: end ? 'exit 0' : 'done',
    exited: end ? ('signal' in end ? `ended by ${end.signal}` : `exit ${end.code}`) : '',
    error: 'failed',
    stopped: result?.unfinished === 'failed' ? 'did not finish' : 'stopped',
  }[status];
  const [open, setOpen] = useState(current || status !== 'done');
  const what = describeCall(name, args);
  const shownArgs = pretty(args);
  const output = result ? result.output : (live?.output ?? '');
  const long = output.length > SHOW && !all;
  return (
    <details
      class={`tool-card ${status}`}
      data-testid="tool-card"
      data-status={status}
      data-tool={name}
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary class="tool-head">
        <span class="tool-icon">
          <Icon name={status === 'running' ? 'spin' : status === 'done' ? 'check' : 'alert'} />
        </span>
        <span class="tool-what" data-testid="tool-headline">
          <span class="tool-label">{what.label}</span>
          {what.subject && <code class="tool-subject">{what.subject}</code>}
        </span>
        <span class="tool-status small" data-testid="tool-status">
          {label}
        </span>
      </summary>
      <div class="tool-body">
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
        {shownArgs && shownArgs !== '{}' && (
          <details class="tool-args">
            <summary>Arguments ({name})</summary>
            <pre>{shownArgs}</pre>
          </details>
        )}
      </div>
    </details>
  );
}
