import { startChild } from '../shared/child.js';
import type { Config } from '../shared/config/schema.js';
import { redactConfigSecrets } from '../shared/config/secrets.js';
import { connectionCaps, readNofile } from '../shared/fd-limit.js';
import { log, redact } from '../shared/log.js';
import { resolvePaths } from '../shared/paths.js';
import { sandboxStatus } from '../shared/sandbox/status.js';
import { openDb } from '../shared/store/db.js';
import { configureTelemetry } from '../shared/telemetry/trace.js';
import { Gateway } from './app.js';
import { ConnectionCap } from './conn-cap.js';
import type { Deps } from './deps.js';
import { chooseEngine, createEngine } from './engine/pick.js';
import { allRoutes } from './routes/index.js';
import { chatCommands } from './routes/sessions/chat.js';

/** The gateway process: takes its config and key from the supervisor, listens, serves. */
/** The previous gateway's listening socket, when its engine could not share the port (see engine/node.ts). */
let inherited: unknown;
process.on('message', (m: unknown, handle: unknown) => {
  if (
    handle !== undefined &&
    typeof m === 'object' &&
    m !== null &&
    (m as { type?: unknown }).type === 'gateway.listener'
  )
    inherited = handle;
});
let gateway: Gateway | undefined;
const endpoint = startChild('gateway', undefined, (): Record<string, number> => {
  const s = gateway?.ws.stats();
  return s
    ? {
        ws_topics: s.topics,
        ws_kept_events: s.events,
        ws_kept_bytes: s.bytes,
        ws_topics_forgotten: s.forgotten,
      }
    : {};
});
let config: Config | undefined;

endpoint.handle('child.start', async (start) => {
  if (!start.access_key || !start.listen)
    throw new Error('the gateway needs an access key and a listen address');
  redact(start.access_key);
  redactConfigSecrets(start.config);
  config = start.config;
  // The first /api/health answers the sandbox's state, which takes running bubblewrap twice: begun
  // first, the runs go on beside the engine, the store and the routes being set up (the probe is
  // remembered), not after them.
  sandboxStatus(start.config.sandbox.enabled).catch(() => undefined);
  await configureTelemetry(start.config.telemetry, 'gateway');
  const engineName = chooseEngine();
  // The supervisor raised the soft limit before forking us (children inherit it); read what we got.
  const nofile = readNofile();
  const cap = new ConnectionCap(connectionCaps(nofile?.soft));
  const gw = new Gateway(
    start.config,
    start.access_key,
    await createEngine(engineName),
    start.started_at,
    start.ws_state,
    cap,
  );
  const paths = resolvePaths();
  const db = openDb(paths.db);
  const deps: Deps = {
    endpoint,
    db,
    paths,
    config: () => config ?? start.config,
    publish: gw.ws.publish,
    draining: () => gw.draining,
    startedAt: gw.startedAt,
    hub: gw.ws,
    accessKey: () => start.access_key ?? '',
  };
  gw.setRoutes(allRoutes(deps));
  gw.ws.onCommand = chatCommands(deps, gw.ws);
  const port = await gw.listen(start.listen.host, start.listen.port, inherited);
  inherited = undefined;
  gateway = gw;
  // The successor of a gateway that drained: clients resuming the server topic learn it is over.
  if (start.ws_state) gw.setDraining(false);
  log.info(
    `listening with the ${engineName === 'uws' ? 'native uWebSockets.js' : 'node:http + ws'} engine`,
    {
      port,
      ...(cap.caps
        ? { fd_limit: nofile?.soft, max_connections: cap.caps.total, max_websockets: cap.caps.ws }
        : {}),
    },
  );
  return { port, engine: engineName, ...(engineName === 'uws' ? { uws: 'native' as const } : {}) };
});

endpoint.handle('gateway.listener', async () => {
  const handle = gateway?.engine.listenerToPass();
  if (!handle || !process.send) return { sent: false };
  process.send({ kind: 'event', type: 'gateway.listener', payload: {} }, handle as never);
  return { sent: true };
});

// The successor numbers /ws events from here on; ours go to it through the supervisor.
endpoint.handle('gateway.ws_state', () => {
  if (!gateway) throw new Error('the gateway has not started yet');
  return gateway.ws.handOff((topic, type, data) =>
    endpoint.emit('ws.publish', { topic, type, data }),
  );
});

endpoint.handle('gateway.handover', async () => ({
  open_connections: (await gateway?.handover()) ?? 0,
}));

endpoint.onEvent((event) => {
  if (!gateway) return;
  if (event.type === 'server.draining') gateway.setDraining(true, event.payload.retry_after_s);
  else if (event.type === 'server.resumed') {
    gateway.ws.takeBack();
    gateway.setDraining(false);
  } else if (event.type === 'config.changed') {
    config = event.payload.config;
    redactConfigSecrets(config);
    gateway.updateConfig(event.payload.config);
    void configureTelemetry(config.telemetry, 'gateway');
  } else if (event.type === 'ws.delta') gateway.ws.publishDelta(event.payload);
  else if (event.type === 'ws.publish')
    gateway.ws.publishChecked(event.payload.topic, event.payload.type, event.payload.data);
});

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {}); // Ctrl-C reaches the whole group; the supervisor decides when we stop
