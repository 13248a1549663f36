import { z } from 'zod';
import { mcpNameSchema } from '../../../shared/config/mcp.js';
import { ApiError } from '../../../shared/errors.js';
import { IpcCallError } from '../../../shared/protocol/endpoint.js';
import type { Deps } from '../../deps.js';
import { mcpOAuthStarted } from '../../../shared/protocol/answers/mcp.js';
import { route, type Route } from '../../route.js';

const CALLBACK_PATH = '/api/mcp/oauth/callback';
/** Where the browser lands after a sign-in: a fixed place in the Web UI, never one taken from the request. */
const DONE_LOCATION = '/#/mcp';

const startBody = z
  .strictObject({
    origin: z
      .url({
        protocol: /^https?$/,
        error:
          'origin must be the http(s) address the browser reaches svc at, e.g. "https://svc.example.com"',
      })
      .optional(),
  })
  .optional();
/** Authorization servers may add parameters of their own (iss, scope, error_description): ignored. */
const callbackQuery = z.looseObject({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'not an OAuth error code')
    .optional(),
});

/**
 * OAuth sign-in to remote MCP servers, with the SDK's client flow in the mcp worker. Sign in (with
 * the key, like every route) answers where to send the browser; the authorization server sends it
 * back to the callback, which needs no key: the browser may carry none when it comes back from
 * another site. The callback trusts only the `state` it carries, 32 random bytes the worker bound
 * to this one sign-in, usable once, for 10 minutes; it shows nothing but the outcome, and sends the
 * browser on to a fixed place (no open redirect). The code and the tokens never reach a response
 * or a log.
 */
export function mcpOAuthRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/mcp/servers/:name/oauth/start',
      summary:
        'Starts signing in to a remote MCP server that asks for it (OAuth): answers authorization_url, where to send the browser (null when stored tokens could be refreshed instead). Give {"origin"} as the address the browser reaches svc at; the authorization server sends it back to /api/mcp/oauth/callback there.',
      body: startBody,
      response: mcpOAuthStarted,
      errors: [409],
      handler: async ({ params, body, req }) => {
        const name = mcpNameSchema.safeParse(params.name);
        const server =
          name.success && Object.hasOwn(deps.config().mcp.servers, name.data)
            ? deps.config().mcp.servers[name.data]
            : undefined;
        if (!name.success || !server)
          throw new ApiError(
            'not_found',
            `There is no MCP server "${params.name ?? ''}"; GET /api/mcp/servers lists them.`,
          );
        if (server.url === undefined)
          throw new ApiError(
            'conflict',
            `"${name.data}" is a local (stdio) server; only remote servers sign in.`,
          );
        if (!server.enabled)
          throw new ApiError(
            'conflict',
            `The MCP server "${name.data}" is disabled; enable it (PATCH {"enabled": true}) first.`,
          );
        const redirect = new URL(CALLBACK_PATH, body?.origin ?? originOf(req.headers['host'])).href;
        const r = await deps.endpoint.request('mcp.oauth.start', {
          name: name.data,
          redirect_url: redirect,
        });
        return {
          body: { name: name.data, authorization_url: r.authorization_url, redirect_url: redirect },
        };
      },
    }),
    route({
      method: 'GET',
      path: CALLBACK_PATH,
      summary:
        'Where the authorization server sends the browser back after an MCP server sign-in. Public: only the single-use state it carries counts. Answers 303 to the Web UI, or a page saying what went wrong.',
      status: 303,
      response: null,
      errorPages: {
        400: 'a page saying why the sign-in did not finish (unknown, used or expired state, refused, failed)',
        404: 'a page saying the server is gone (removed or disabled while signing in)',
      },
      public: true,
      query: callbackQuery,
      handler: async ({ query }) => {
        try {
          await deps.endpoint.request('mcp.oauth.finish', {
            state: query.state,
            code: query.code,
            error: query.error,
          });
          return {
            status: 303,
            headers: {
              Location: DONE_LOCATION,
              'Cache-Control': 'no-store',
              'Referrer-Policy': 'no-referrer',
            },
          };
        } catch (err) {
          const known =
            err instanceof IpcCallError &&
            ['invalid_request', 'not_found', 'conflict'].includes(err.code);
          const message = known
            ? err.message
            : 'svc could not finish the sign-in: its MCP worker did not answer. Try Sign in again.';
          return {
            status: known && err.code === 'not_found' ? 404 : 400,
            body: page(message),
            headers: PAGE_HEADERS,
          };
        }
      },
    }),
  ];
}

function originOf(host: string | undefined): string {
  try {
    if (host) return new URL(`http://${host}`).origin;
  } catch {
    // fall through
  }
  throw new ApiError(
    'invalid_request',
    'Give {"origin": "<the address the browser reaches svc at>"}: the request has no usable Host header.',
  );
}

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'",
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
};

function page(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in not finished · svc</title></head><body><h1>Sign-in not finished</h1><p>${escapeHtml(message)}</p><p><a href="${DONE_LOCATION}">Back to the MCP servers</a></p></body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
