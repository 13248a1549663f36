import { z } from 'zod';
import type { Deps } from '../deps.js';
import { sandboxStatus, type SandboxStatus } from '../../shared/sandbox/status.js';
import { healthView, restarting } from '../../shared/protocol/answers.js';
import { requestDefs } from '../../shared/protocol/ipc.js';
import { ApiError } from '../../shared/errors.js';
import { keyRequired } from '../person.js';
import { route, type Route } from '../route.js';

const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,200}$/;
const toolDefaultBody = z.strictObject({
  default: z.enum(['allow', 'ask'], {
    error: 'default is "allow" (runs without asking when no rule decides) or "ask"',
  }),
});

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
      summary:
        'The tools the agent can use: each with its purpose for a person, its JSON schema, and its permission default (allow, ask or deny; built-in or from permissions.yml; locked when the engine forbids allowing it). rules_problem names what is wrong with permissions.yml when it cannot be used.',
      response: requestDefs['agent.tools'].result,
      handler: async () => ({
        body: await deps.endpoint.request('agent.tools', {}),
      }),
    }),
    route({
      method: 'PUT',
      path: '/api/tools/:name/permission',
      summary:
        'Sets a tool\'s default in permissions.yml, {"default": "allow" | "ask"}: what its calls get when no rule (yours or built-in) decides; hard limits and built-in rules still apply. Allowing needs the access key even on loopback (403 key_required); a tool that always asks (restart_server) answers 409; a permissions.yml with a problem is left alone (409).',
      body: toolDefaultBody,
      response: requestDefs['agent.tool_default'].result,
      handler: async ({ params, body, keyed }) => {
        if (!TOOL_NAME.test(params.name))
          throw new ApiError(
            'not_found',
            `There is no tool "${params.name.slice(0, 80)}"; GET /api/tools lists them.`,
          );
        // Another program on this machine (one the agent started) must not let the agent do more.
        if (body.default === 'allow' && !keyed)
          throw keyRequired(`Letting ${params.name} run without asking`);
        return {
          body: await deps.endpoint.request('agent.tool_default', {
            tool: params.name,
            default: body.default,
          }),
        };
      },
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
