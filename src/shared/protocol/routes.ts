import type { RequestType, Role } from './ipc.js';

/**
 * Who answers each IPC request and who may send it: one table for every process. The supervisor
 * checks each request a child sends against it before answering or passing it on, so a worker
 * cannot reach what its role has no business with (the agent worker, whose commands run the
 * model's code nearby, cannot write config.yml). `child` means any child process.
 */
export interface RequestRoute {
  to: Role | 'child';
  from: readonly Role[];
}

const gw = ['gateway'] as const;
const sup = ['supervisor'] as const;

export const requestRoutes: Readonly<Record<RequestType, RequestRoute>> = {
  // The supervisor's own calls to its children.
  'child.start': { to: 'child', from: sup },
  'child.stats': { to: 'child', from: sup },
  'child.ping': { to: 'child', from: sup },
  'worker.echo': { to: 'child', from: ['supervisor', 'gateway'] },
  'gateway.handover': { to: 'gateway', from: sup },
  'gateway.ws_state': { to: 'gateway', from: sup },
  'gateway.listener': { to: 'gateway', from: sup },
  'agent.turn': { to: 'agent', from: sup },
  'agent.approvals': { to: 'agent', from: sup },
  'agent.approval': { to: 'agent', from: sup },
  'agent.interrupt': { to: 'agent', from: sup },
  'agent.retire': { to: 'agent', from: sup },
  'cron.reload': { to: 'cron', from: sup },

  // What the HTTP API asks of the supervisor: status, config writes, restarts, restores.
  'supervisor.status': { to: 'supervisor', from: gw },
  'supervisor.restart': { to: 'supervisor', from: ['gateway', 'agent'] },
  'config.models.create': { to: 'supervisor', from: gw },
  'config.models.update': { to: 'supervisor', from: gw },
  'config.models.delete': { to: 'supervisor', from: gw },
  'config.slots.set': { to: 'supervisor', from: gw },
  'config.mcp.create': { to: 'supervisor', from: gw },
  'config.mcp.update': { to: 'supervisor', from: gw },
  'config.mcp.delete': { to: 'supervisor', from: gw },
  'config.mcp.import': { to: 'supervisor', from: gw },
  'config.channels.save': { to: 'supervisor', from: gw },
  'config.channels.delete': { to: 'supervisor', from: gw },
  'trash.restore': { to: 'supervisor', from: gw },
  'version.info': { to: 'supervisor', from: gw },
  'version.upgrade': { to: 'supervisor', from: gw },
  'cron.changed': { to: 'supervisor', from: gw },
  'cron.idle': { to: 'supervisor', from: ['cron'] },

  // Turns: started and stopped by whoever takes the user's words (and by an agent's workflow step).
  'turn.start': { to: 'supervisor', from: ['gateway', 'agent', 'channels', 'cron'] },
  'turn.interrupt': { to: 'supervisor', from: ['gateway', 'channels', 'cron'] },
  'approval.answer': { to: 'supervisor', from: ['gateway', 'channels'] },
  'approval.list': { to: 'supervisor', from: gw },
  'agent.tools': { to: 'agent', from: gw },
  'agent.probe_model': { to: 'agent', from: gw },

  // MCP: the agent calls tools; the API shows and manages the connections.
  'mcp.tools': { to: 'mcp', from: ['agent'] },
  'mcp.call': { to: 'mcp', from: ['agent'] },
  'mcp.cancel': { to: 'mcp', from: ['agent'] },
  // The agent asks, through the supervisor, for the mcp worker's direct socket (and a one-time token).
  'mcp.direct': { to: 'mcp', from: ['agent'] },
  'mcp.status': { to: 'mcp', from: gw },
  'mcp.reconnect': { to: 'mcp', from: gw },
  'mcp.oauth.start': { to: 'mcp', from: gw },
  'mcp.oauth.finish': { to: 'mcp', from: gw },

  // Schedules and channels.
  'cron.run': { to: 'cron', from: gw },
  'channels.status': { to: 'channels', from: gw },
  'channels.send': { to: 'channels', from: gw },
  'channels.send_file': { to: 'channels', from: gw },
  'channels.test': { to: 'channels', from: gw },
  'channels.paired': { to: 'channels', from: gw },
  'channels.login.start': { to: 'channels', from: gw },
  'channels.login.get': { to: 'channels', from: gw },
  'channels.login.cancel': { to: 'channels', from: gw },
  'channels.deliver': { to: 'channels', from: ['cron'] },

  // The browser: the API shows and verifies the connection; the agent acts on pages.
  'browser.status': { to: 'browser', from: gw },
  'browser.verify': { to: 'browser', from: gw },
  'config.browser.set': { to: 'supervisor', from: gw },
  'browser.act': { to: 'browser', from: ['agent'] },
  'browser.cancel': { to: 'browser', from: ['agent'] },
  'browser.record': { to: 'browser', from: ['agent'] },
};

/** Why `from` may not send `type` to `to`, or null when the table allows it. */
export function refusal(type: RequestType, from: Role, to: Role): string | null {
  const route = requestRoutes[type];
  if (!route.from.includes(from)) return `the ${from} process may not send ${type}`;
  if (route.to === 'child' ? to === 'supervisor' : route.to !== to)
    return `${type} goes to ${route.to === 'child' ? 'a child process' : `the ${route.to} process`}, not to ${to}`;
  return null;
}
