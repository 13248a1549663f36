import { startChild } from '../shared/child.js';
import { log } from '../shared/log.js';
import { Gateway } from './app.js';
import { openApiDocument } from './openapi.js';
import { route } from './route.js';
import { systemRoutes } from './routes/system.js';
import { flavour } from './uws.js';

/** The gateway process: takes its config and key from the supervisor, listens, serves. */
const endpoint = startChild('gateway');
let gateway: Gateway | undefined;

endpoint.handle('child.start', async ({ config, access_key, listen }) => {
  if (!access_key || !listen) throw new Error('the gateway needs an access key and a listen address');
  const gw = new Gateway(config, access_key);
  const routes = systemRoutes({ endpoint, draining: () => gw.draining, startedAt: gw.startedAt });
  routes.push(
    route({
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This document: every route with its request schema.',
      handler: () => ({ body: openApiDocument(routes) }),
    }),
  );
  gw.setRoutes(routes);
  const port = await gw.listen(listen.host, listen.port);
  gateway = gw;
  log.info(`listening with the ${flavour === 'native' ? 'native uWebSockets.js binary' : 'uWebSockets.js JavaScript fallback (slower)'}`, { port });
  return { port, uws: flavour };
});

endpoint.handle('gateway.handover', async () => ({ open_connections: (await gateway?.handover()) ?? 0 }));

endpoint.onEvent((event) => {
  if (!gateway) return;
  if (event.type === 'server.draining') gateway.setDraining(true, event.payload.retry_after_s);
  else if (event.type === 'server.resumed') gateway.setDraining(false);
  else if (event.type === 'ws.publish') gateway.ws.publish(event.payload.topic, event.payload.type, event.payload.data);
});

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {}); // Ctrl-C reaches the whole group; the supervisor decides when we stop
