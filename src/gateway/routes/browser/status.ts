import { z } from 'zod';
import { browserConfigured } from '../../../shared/config/browser.js';
import { cdpEndpoint, remoteRefusal } from '../../../shared/browser/endpoint.js';
import { ApiError } from '../../../shared/errors.js';
import { browserVerifyLabels } from '../../../shared/form-labels.js';
import type { BrowserStatus } from '../../../shared/protocol/browser.js';
import {
  browserStatusView,
  browserVerifyAnswer,
} from '../../../shared/protocol/answers/browser.js';
import type { Deps } from '../../deps.js';
import { route, type Route } from '../../route.js';

const verifyBody = z
  .strictObject({
    port: z
      .number()
      .int('a port is a whole number from 1 to 65535')
      .min(1, 'a port is a whole number from 1 to 65535')
      .max(65535, 'a port is a whole number from 1 to 65535')
      .optional(),
    cdp_url: z
      .url({
        protocol: /^(https?|wss?)$/,
        error: 'cdp_url must be an http(s):// or ws(s):// address, e.g. "http://127.0.0.1:9222"',
      })
      .max(2048)
      .optional(),
    timeout_seconds: z
      .number()
      .min(1)
      .max(30)
      .default(5)
      .describe('How long to wait for the browser (default 5 s)'),
  })
  .refine((b) => b.port === undefined || b.cdp_url === undefined, {
    message: 'give port or cdp_url, not both',
    path: ['port'],
  });

const NOT_CONFIGURED =
  'No browser is configured. Start Chrome or Chromium with --remote-debugging-port=9222 and verify port 9222 (POST /api/browser/verify {"port": 9222}), or set browser.launch: auto in config.yml for a headless one svc starts itself.';

/** The browser connection: its status and verifying an endpoint (the browser worker connects; the supervisor saves). */
export function browserRoutes(deps: Deps): Route[] {
  const status = async (): Promise<BrowserStatus> => {
    const b = deps.config().browser;
    if (!browserConfigured(b))
      return {
        configured: false,
        connected: false,
        endpoint: null,
        mode: null,
        browser: null,
        version: null,
        tabs: [],
        reason: NOT_CONFIGURED,
        launched_pid: null,
      };
    try {
      return await deps.endpoint.request('browser.status', {});
    } catch (err) {
      throw new ApiError(
        'unavailable',
        `The browser worker did not answer: ${(err as Error).message}. svc logs --process browser shows why.`,
      );
    }
  };
  return [
    route({
      method: 'GET',
      path: '/api/browser/status',
      summary:
        'The browser connection over the Chrome DevTools Protocol: configured, connected, endpoint, browser name and version, open tabs, and when not connected why and the fix (reason).',
      response: browserStatusView,
      errors: [503],
      handler: async () => ({ body: await status() }),
    }),
    route({
      method: 'POST',
      path: '/api/browser/launch',
      summary:
        "Has svc start a headless Chromium of its own (browser.launch: auto in config.yml, replacing cdp_url or port) and answers the connection's status once it is up or has failed (its reason names the fix, such as installing Chromium). Body: {}.",
      body: z.strictObject({}),
      response: browserStatusView,
      handler: async () => {
        await deps.endpoint.request('config.browser.set', { launch: 'auto' });
        // The browser worker starts with the new config; its first status waits for the launch.
        const until = Date.now() + 30_000;
        let last = await status().catch(() => undefined);
        while (!last?.connected && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 250));
          last = await status().catch(() => undefined);
        }
        return { body: last ?? (await status()) };
      },
    }),
    route({
      method: 'POST',
      path: '/api/browser/verify',
      summary:
        'Connects to a browser\'s DevTools endpoint, {"port": 9222} or {"cdp_url": "http://127.0.0.1:9222"} (or {} for the configured one), within timeout_seconds (default 5). Answers {ok: true, browser, version, tabs, saved} (a given endpoint is saved in config.yml) or {ok: false, error}. Only loopback endpoints unless browser.allow_remote is true.',
      body: verifyBody,
      fields: { what: 'browser connection', labels: browserVerifyLabels },
      response: browserVerifyAnswer,
      handler: async ({ body }) => {
        const given = body.port !== undefined || body.cdp_url !== undefined;
        const config = deps.config().browser;
        if (!given && !browserConfigured(config))
          return { body: { ok: false, endpoint: null, error: NOT_CONFIGURED, saved: false } };
        const ep = given ? cdpEndpoint(body) : null;
        if (ep && !ep.loopback && !config.allow_remote)
          return {
            body: { ok: false, endpoint: ep.hostPort, error: remoteRefusal(ep), saved: false },
          };
        const timeoutMs = Math.round(body.timeout_seconds * 1000);
        const r = await deps.endpoint.request(
          'browser.verify',
          { cdp_url: body.cdp_url, port: body.port, timeout_ms: timeoutMs },
          { timeoutMs: timeoutMs + 20_000 },
        );
        let saved = false;
        if (r.ok && given) {
          await deps.endpoint.request('config.browser.set', {
            cdp_url: body.cdp_url,
            port: body.port,
          });
          saved = true;
        }
        return { body: { ...r, saved } };
      },
    }),
  ];
}
