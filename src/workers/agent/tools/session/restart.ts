import { z } from 'zod';
import { defineTool, type Tool } from '../registry.js';

export const RESTART_TOOL = 'restart_server';

/**
 * `restart_server`: asks the supervisor to restart svc (it drains running turns first). The
 * permission engine always asks the user before it runs; this tool only passes the request on.
 */
export function restartTool(requestRestart: (reason: string) => void | Promise<void>): Tool {
  return defineTool({
    name: RESTART_TOOL,
    purpose: 'Restarts svc (to apply new settings). It always asks you first.',
    description:
      'Restarts the svc server, e.g. after changing its configuration or code. Running turns are allowed to finish first, and this one ends. ' +
      "The user is always asked to approve it. Say why in reason. Never stop or kill svc's processes with terminal; use this tool.",
    args: z.object({ reason: z.string().trim().min(1, 'say why').max(500) }).strict(),
    run: async ({ reason }) => {
      await requestRestart(reason);
      return {
        output: `Restart requested (${reason}). svc restarts once running turns finish; the conversation continues after it is back.`,
      };
    },
  });
}
