import { z } from 'zod';
import type { Deps } from '../deps.js';
import { sandboxStatus, type SandboxStatus } from '../../shared/sandbox/status.js';
import { healthView, restarting } from '../../shared/protocol/answers.js';
import { requestDefs } from '../../shared/protocol/ipc.js';
import { ApiError } from '../../shared/errors.js';
import { route, type Route } from '../route.js';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** Health, version, status and restart: what any client needs to know the server is there. */
export function systemRoutes(
  deps: Pick<Deps, 'endpoint' | 'draining' | 'startedAt' | 'config'>,
): Route[] {
  /** The sandbox probe's result (it is remembered for the process anyway), for the enabled flag it was made with. */
  let probed: { enabled: boolean; status: SandboxStatus } | undefined;
  return [
    route({
      method: 'GET',
      path: '/api/health',
      summary:
        'Whether the server answers, and whether terminal commands run in the OS sandbox (sandbox.state: on, off or unavailable, with the fix); public, carries no secrets.',
      public: true,
      response: healthView,
      handler: () => {
        const enabled = deps.config().sandbox.enabled;
        const answer = (sandbox: SandboxStatus) => ({
          body: {
            status: deps.draining() ? ('draining' as const) : ('ok' as const),
            uptime_s: Math.round((Date.now() - deps.startedAt) / 1000),
            sandbox: { state: sandbox.state, message: sandbox.message },
          },
          headers: NO_STORE,
        });
        // Once probed, the answer is synchronous: the hot path then costs no promise hop or abort watch.
        if (probed?.enabled === enabled) return answer(probed.status);
        return sandboxStatus(enabled).then((status) => {
          probed = { enabled, status };
          return answer(status);
        });
      },
    }),
    route({
      method: 'GET',
      path: '/api/status',
      summary:
        'The processes `svc status` shows: role, pid, state, uptime, restarts, memory, in-flight turns.',
      response: requestDefs['supervisor.status'].result,
      handler: async () => ({
        body: await deps.endpoint.request('supervisor.status', {}),
      }),
    }),
    route({
      method: 'GET',
      path: '/api/tools',
      summary: 'The tools the agent can use, each with its JSON schema.',
      response: requestDefs['agent.tools'].result,
      handler: async () => ({
        body: await deps.endpoint.request('agent.tools', {}),
      }),
    }),
    route({
      method: 'POST',
      path: '/api/restart',
      summary:
        'Drains in-flight turns, then replaces every process with config and access key re-read. Answers 202 at once.',
      work: false,
      body: z.object({ reason: z.string().max(200).optional() }).strict(),
      status: 202,
      response: restarting,
      errors: [409],
      handler: async ({ body }) => {
        const ack = await deps.endpoint.request('supervisor.restart', {
          reason: body.reason ?? 'POST /api/restart',
        });
        if (!ack.accepted)
          throw new ApiError('conflict', `The server is ${ack.state} and cannot restart now.`);
        return { status: 202, body: { status: 'restarting' as const } };
      },
    }),
  ];
}
