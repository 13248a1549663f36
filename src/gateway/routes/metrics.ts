import type { Deps } from '../deps.js';
import type { Metrics } from '../metrics.js';
import { route, type Route } from '../route.js';

/**
 * GET /api/metrics. prom-client is loaded by the first scrape, not at start, so a server nobody
 * scrapes keeps its idle memory; the counters fed by /ws events count from that first scrape
 * (a scraper asks every few seconds), those from the store cover its whole history.
 */
export function metricsRoutes(deps: Deps): Route[] {
  let metrics: Promise<Metrics> | undefined;
  const load = () =>
    (metrics ??= import('../metrics.js').then(({ Metrics }) => {
      const m = new Metrics(
        deps.db,
        () => deps.endpoint.request('supervisor.status', {}),
        () => ({ connections: deps.hub.count, subscriptions: deps.hub.subscriptions }),
      );
      deps.hub.tap(m.onEvent);
      return m;
    }));
  return [
    route({
      method: 'GET',
      path: '/api/metrics',
      summary:
        'Metrics in the Prometheus text format: turns by status and origin, turn and first-delta latency, model calls by provider and status with their latency, tokens and cost by model and origin, tool calls by tool and result, approvals asked and waiting, MCP and channel states, /ws connections, memory, CPU and restarts per process.',
      response: null,
      produces: 'text/plain',
      handler: async () => {
        const m = await load();
        return {
          body: await m.render(),
          headers: { 'Content-Type': m.contentType, 'Cache-Control': 'no-store' },
        };
      },
    }),
  ];
}
