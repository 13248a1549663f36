import type { RequestType, Role } from './ipc.js';

/**
 * Who answers each IPC request, who may send it and how long its sender waits: one table for
 * every process. The supervisor checks each request a child sends against it before answering or
 * passing it on, so a worker cannot reach what its role has no business with (the agent worker,
 * whose commands run the model's code nearby, cannot write config.yml). `child` means any child
 * process. A caller names only the type and payload; the endpoint takes target and deadline from
 * here (a forwarded request keeps its sender's deadline).
 */
export interface RequestRoute {
  to: Role | 'child';
  from: readonly Role[];
  /** How long the sender waits for the answer; DEFAULT_DEADLINE_MS when not given. */
  ms?: number;
}

/** The wait of a request the table gives no `ms`. */
export const DEFAULT_DEADLINE_MS = 10_000;
/** What a request adds to the waits of the requests its handler makes: the hops, on a loaded machine. */
const HOP_MS = 5000;

/**
 * Waits inside the supervisor's handlers. The requests whose handlers wait on them are derived
 * from them, so the gateway's wait always covers the supervisor's (written once, here).
 */
export const innerWaits = {
  /**
   * An agent worker takes a turn (it writes the turn's row first). A turn
   * that grows the pool waits for the new worker's cold start too: 14 s measured at load 29 on
   * 2 cores, where 15 s answered 504 to turns a moment later workers would have taken.
   */
  agentTakesTurn: 45_000,
  /** An agent worker acknowledges an interrupt; past it the worker is taken for hung and killed. */
  interruptAck: 4000,
  /** A stopped turn (or a killed worker's) is over and its end event passed on. */
  turnEnds: 15_000,
  /** An agent worker answers about its approvals. */
  approvals: 5000,
  /** An agent worker's test call to a model (Save and test). */
  modelProbe: 30_000,
} as const;

const gw = ['gateway'] as const;
const sup = ['supervisor'] as const;

export const requestRoutes: Readonly<Record<RequestType, RequestRoute>> = {
  // The supervisor's own calls to its children.
  'child.start': { to: 'child', from: sup, ms: 15_000 },
  'child.stats': { to: 'child', from: sup, ms: 1000 },
  'child.ping': { to: 'child', from: sup },
  'worker.echo': { to: 'child', from: ['supervisor', 'gateway'] },
  'gateway.handover': { to: 'gateway', from: sup, ms: 15_000 },
  'gateway.ws_state': { to: 'gateway', from: sup, ms: 5000 },
  'gateway.listener': { to: 'gateway', from: sup, ms: 5000 },
  'agent.turn': { to: 'agent', from: sup, ms: innerWaits.agentTakesTurn },
  'agent.approvals': { to: 'agent', from: sup, ms: innerWaits.approvals },
  'agent.approval': { to: 'agent', from: sup, ms: innerWaits.approvals },
  'agent.interrupt': { to: 'agent', from: sup, ms: innerWaits.interruptAck },
  'agent.retire': { to: 'agent', from: sup, ms: 5000 },
  'cron.reload': { to: 'cron', from: sup, ms: 30_000 },

  // What the HTTP API asks of the supervisor: status, config writes, restarts, restores.
  'supervisor.status': { to: 'supervisor', from: gw, ms: 5000 },
  'supervisor.restart': { to: 'supervisor', from: ['gateway', 'agent'], ms: 5000 },
  'config.models.create': { to: 'supervisor', from: gw },
  'config.models.update': { to: 'supervisor', from: gw },
  'config.models.delete': { to: 'supervisor', from: gw },
  'config.slots.set': { to: 'supervisor', from: gw },
  'config.budgets.set': { to: 'supervisor', from: gw },
  'config.mcp.create': { to: 'supervisor', from: gw },
  'config.mcp.update': { to: 'supervisor', from: gw },
  'config.mcp.delete': { to: 'supervisor', from: gw },
  'config.mcp.import': { to: 'supervisor', from: gw },
  'config.channels.save': { to: 'supervisor', from: gw },
  'config.channels.delete': { to: 'supervisor', from: gw },
  'trash.restore': { to: 'supervisor', from: gw },
  'version.info': { to: 'supervisor', from: gw, ms: 3000 },
  'version.upgrade': { to: 'supervisor', from: gw, ms: 5000 },
  'cron.changed': { to: 'supervisor', from: gw, ms: 20_000 },
  'cron.idle': { to: 'supervisor', from: ['cron'] },

  // Turns: started and stopped by whoever takes the user's words (and by an agent's workflow step).
  'turn.start': {
    to: 'supervisor',
    from: ['gateway', 'agent', 'channels', 'cron'],
    ms: innerWaits.agentTakesTurn + HOP_MS,
  },
  'turn.interrupt': {
    to: 'supervisor',
    from: ['gateway', 'channels', 'cron'],
    ms: innerWaits.interruptAck + innerWaits.turnEnds + HOP_MS,
  },
  'approval.answer': {
    to: 'supervisor',
    from: ['gateway', 'channels'],
    ms: innerWaits.approvals + HOP_MS,
  },
  'approval.list': { to: 'supervisor', from: gw, ms: innerWaits.approvals + HOP_MS },
  // The pool may have no worker: the list waits for one's cold start, as a turn does.
  'agent.tools': { to: 'agent', from: gw, ms: innerWaits.agentTakesTurn + HOP_MS },
  'agent.tool_default': { to: 'agent', from: gw, ms: innerWaits.agentTakesTurn + HOP_MS },
  'agent.probe_model': { to: 'agent', from: gw, ms: innerWaits.modelProbe + HOP_MS },

  // MCP: the agent calls tools; the API shows and manages the connections.
  'mcp.tools': { to: 'mcp', from: ['agent'], ms: 5000 },
  'mcp.call': { to: 'mcp', from: ['agent'] },
  'mcp.cancel': { to: 'mcp', from: ['agent'], ms: 5000 },
  // The agent asks, through the supervisor, for the mcp worker's direct socket (and a one-time token).
  'mcp.direct': { to: 'mcp', from: ['agent'], ms: 3000 },
  'mcp.status': { to: 'mcp', from: gw, ms: 5000 },
  // Leeway over a server's own timeout (timeout_seconds, 60 s by default) for the hops.
  'mcp.resources': { to: 'mcp', from: gw, ms: 70_000 },
  'mcp.prompts': { to: 'mcp', from: gw, ms: 70_000 },
  'mcp.prompt.get': { to: 'mcp', from: gw, ms: 70_000 },
  'mcp.resource.read': { to: 'mcp', from: ['gateway', 'agent'], ms: 70_000 },
  'mcp.reconnect': { to: 'mcp', from: gw, ms: 60_000 },
  'mcp.oauth.start': { to: 'mcp', from: gw, ms: 60_000 },
  'mcp.oauth.finish': { to: 'mcp', from: gw, ms: 60_000 },

  // Schedules and channels.
  'cron.run': { to: 'cron', from: gw, ms: 60_000 },
  /** A large home takes minutes to archive; the answer comes when the archive is whole. */
  'backup.create': { to: 'cron', from: gw, ms: 30 * 60_000 },
  'channels.status': { to: 'channels', from: gw, ms: 5000 },
  'channels.send': { to: 'channels', from: gw, ms: 60_000 },
  'channels.send_file': { to: 'channels', from: gw, ms: 120_000 },
  'channels.test': { to: 'channels', from: gw, ms: 60_000 },
  'channels.paired': { to: 'channels', from: gw },
  'channels.login.start': { to: 'channels', from: gw, ms: 20_000 },
  'channels.login.get': { to: 'channels', from: gw, ms: 5000 },
  'channels.login.cancel': { to: 'channels', from: gw },
  'channels.deliver': { to: 'channels', from: ['cron'], ms: 15_000 },

  // The browser: the API shows and verifies the connection; the agent acts on pages.
  'browser.status': { to: 'browser', from: gw, ms: 45_000 },
  'browser.verify': { to: 'browser', from: gw },
  'config.browser.set': { to: 'supervisor', from: gw },
  'config.backup.set': { to: 'supervisor', from: gw },
  // Leeway over the longest action (a 30 s navigation, a 120 s wait).
  'browser.act': { to: 'browser', from: ['agent'], ms: 150_000 },
  'browser.cancel': { to: 'browser', from: ['agent'], ms: 5000 },
  'browser.record': { to: 'browser', from: ['agent'], ms: 30_000 },
};

/** How long the sender of `type` waits for its answer. */
export function deadlineMs(type: RequestType): number {
  return requestRoutes[type].ms ?? DEFAULT_DEADLINE_MS;
}

/** Why `from` may not send `type` to `to`, or null when the table allows it. */
export function refusal(type: RequestType, from: Role, to: Role): string | null {
  const route = requestRoutes[type];
  if (!route.from.includes(from)) return `the ${from} process may not send ${type}`;
  if (route.to === 'child' ? to === 'supervisor' : route.to !== to)
    return `${type} goes to ${route.to === 'child' ? 'a child process' : `the ${route.to} process`}, not to ${to}`;
  return null;
}
