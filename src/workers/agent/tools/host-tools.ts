import { memoryTools } from './memory.js';
import type { Tool } from './registry.js';
import { restartTool } from './restart.js';
import { taskTools, type Publish } from './tasks.js';
import { terminalTools, type TerminalOptions } from './terminal.js';

export { memoryTools } from './memory.js';
export { restartTool } from './restart.js';
export { taskTools, type Publish } from './tasks.js';
export { terminalTools, type TerminalOptions } from './terminal.js';

export interface HostToolsOptions {
  /** Provider API keys: no command sees an environment variable holding one. */
  secrets?: TerminalOptions['secrets'];
  /** The OS sandbox around terminal commands. */
  sandbox?: TerminalOptions['sandbox'];
  /** `/ws` events on other topics than the session's (task.* on `tasks`). */
  publish?: Publish;
  /** Asks the supervisor to restart (IPC `supervisor.restart`); without it there is no restart_server. */
  requestRestart?: (reason: string) => void | Promise<void>;
}

/** terminal, terminal_output, terminal_stop, task_create/update/list, memory_write/search, restart_server. */
export function hostTools(opts: HostToolsOptions = {}): Tool[] {
  return [
    ...terminalTools({ secrets: opts.secrets, sandbox: opts.sandbox }),
    ...taskTools({ publish: opts.publish }),
    ...memoryTools(),
    ...(opts.requestRestart ? [restartTool(opts.requestRestart)] : []),
  ];
}
