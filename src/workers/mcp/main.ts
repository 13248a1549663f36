import type { Config } from '../../shared/config/schema.js';
import { redactConfigSecrets } from '../../shared/config/secrets.js';
import { startChild } from '../../shared/child.js';
import { log } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { ipcPublish } from '../../shared/ws-publish.js';
import { IpcCallError, type Endpoint } from '../../shared/protocol/endpoint.js';
import { DirectChannels } from './direct.js';
import { Manager } from './manager.js';

/**
 * The mcp worker: holds the connections to every configured MCP server for all agent workers.
 * Tool calls arrive from agents on a direct channel the supervisor brokered (else through the
 * supervisor itself); status changes go out on the `mcp` topic.
 */
let calls = 0;
const paths = resolvePaths();
const endpoint = startChild('mcp', () => calls);
/** Status events carry the state and a tool count; GET /api/mcp/servers/{name} lists the tools. */
const publish = ipcPublish(endpoint);
const manager = new Manager(
  {
    status: (s) =>
      publish('mcp', 'mcp.status', {
        name: s.name,
        status: s.status,
        error: s.error,
        connected_at: s.connected_at,
        transport: s.transport,
        needs_auth: s.needs_auth,
        tool_count: s.tools.length,
      }),
    groups: (pgids) => endpoint.emit('child.groups', { pgids }),
  },
  paths.home,
);

function apply(config: Config): void {
  redactConfigSecrets(config); // env and header values never reach a log line
  manager.apply(config.mcp.servers);
}

endpoint.handle('child.start', ({ config }) => {
  apply(config);
  return {};
});
endpoint.onEvent((event) => {
  if (event.type === 'config.changed') apply(event.payload.config);
});
endpoint.handle('mcp.status', () => ({ servers: manager.statuses() }));
endpoint.handle('mcp.reconnect', async ({ name }) => {
  const conn = manager.get(name);
  if (!conn) throw new IpcCallError('not_found', `There is no MCP server "${name}".`);
  return conn.reconnect();
});

/** What an agent asks of this worker: through the supervisor, or on a direct channel. */
function serveAgent(ep: Endpoint): void {
  ep.handle('mcp.tools', () => ({
    servers: manager
      .statuses()
      .flatMap((s) => (s.status === 'connected' ? [{ name: s.name, tools: s.tools }] : [])),
  }));
  ep.handle('mcp.call', async ({ call_id, server, tool, arguments: args }) => {
    calls++;
    try {
      return await manager.call(call_id, server, tool, args);
    } finally {
      calls--;
    }
  });
  ep.handle('mcp.cancel', ({ call_id }) => ({ cancelled: manager.cancel(call_id) }));
}
serveAgent(endpoint);
const direct = new DirectChannels(paths.runDir, serveAgent);
endpoint.handle('mcp.direct', () => direct.offer());
endpoint.handle('mcp.oauth.start', async ({ name, redirect_url }) => ({
  authorization_url: await manager.signInStart(name, redirect_url),
}));
endpoint.handle('mcp.oauth.finish', ({ state, code, error }) =>
  manager.signInFinish(state, code, error),
);

// However this process ends, the servers it started end with it.
process.on('exit', () => {
  manager.killAllNow();
  direct.closeNow();
});
process.on('SIGTERM', () => {
  void manager
    .closeAll()
    .catch((err: Error) => log.warn('closing MCP servers failed', { error: err.message }))
    .finally(() => process.exit(0));
});
process.on('SIGINT', () => {});
