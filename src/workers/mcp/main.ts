import type { Config } from '../../shared/config/schema.js';
import { redactConfigSecrets } from '../../shared/config/secrets.js';
import { startChild } from '../../shared/child.js';
import { log } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { ipcPublish } from '../../shared/ws-publish.js';
import { IpcCallError, type Endpoint } from '../../shared/protocol/endpoint.js';
import { getPrompt, listPrompts, listResources, readResource } from './catalog.js';
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
        stderr_tail: s.stderr_tail,
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
const connection = (name: string) => {
  const conn = manager.get(name);
  if (!conn) throw new IpcCallError('not_found', `There is no MCP server "${name}".`);
  return conn;
};
endpoint.handle('mcp.reconnect', ({ name }) => connection(name).reconnect());
endpoint.handle('mcp.resources', ({ name }) =>
  connection(name).use('the resource list', listResources),
);
endpoint.handle('mcp.prompts', async ({ name }) => ({
  prompts: await connection(name).use('the prompt list', listPrompts),
}));
endpoint.handle('mcp.prompt.get', ({ name, prompt, arguments: args }) =>
  connection(name).use(`the prompt "${prompt}"`, (c, o) => getPrompt(c, prompt, args, o)),
);

/** What an agent asks of this worker: through the supervisor, or on a direct channel. */
function serveAgent(ep: Endpoint): void {
  ep.handle('mcp.tools', () => ({
    servers: manager
      .statuses()
      .flatMap((s) =>
        s.status === 'connected'
          ? [{ name: s.name, tools: s.tools, resources: manager.get(s.name)?.offersResources() }]
          : [],
      ),
  }));
  ep.handle('mcp.resource.read', async ({ server, uri }) => {
    calls++;
    try {
      return {
        contents: await connection(server).use(`reading ${uri}`, (c, o) => readResource(c, uri, o)),
      };
    } finally {
      calls--;
    }
  });
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
