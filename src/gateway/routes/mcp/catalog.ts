import { z } from 'zod';
import type { McpServer } from '../../../shared/config/mcp.js';
import { ApiError } from '../../../shared/errors.js';
import type { Deps } from '../../deps.js';
import {
  mcpPromptFilled,
  mcpPrompts,
  mcpResourceRead,
  mcpResources,
} from '../../../shared/protocol/answers/mcp.js';
import { route, type Route } from '../../route.js';

const readQuery = z.strictObject({
  uri: z
    .string("give the resource's URI: ?uri=… (from GET /api/mcp/servers/{name}/resources)")
    .min(1)
    .max(8192),
});
const promptBody = z
  .strictObject({
    /** The prompt's arguments by name (GET …/prompts lists them); values are text. */
    arguments: z.record(z.string().max(256), z.string().max(65_536)).default({}),
  })
  .optional();

/**
 * What an MCP server offers besides tools: its resources (and templates), read on request, and its
 * prompts, filled in with arguments. Each asks the server through the mcp worker, live.
 */
export function mcpCatalogRoutes(deps: Deps, serverOr404: (name: string) => McpServer): Route[] {
  /** The server's name, once it is known and enabled. */
  const enabled = (name: string): string => {
    if (!serverOr404(name).enabled)
      throw new ApiError(
        'conflict',
        `The MCP server "${name}" is disabled; enable it (PATCH {"enabled": true}) to see what it offers.`,
      );
    return name;
  };
  return [
    route({
      method: 'GET',
      path: '/api/mcp/servers/:name/resources',
      summary:
        'The resources a connected server offers (uri, name, title, description, mime_type, size) and its resource templates (uri_template, …). A server without resources answers empty lists; 409 when it is not connected.',
      response: mcpResources,
      errors: [409],
      handler: async ({ params }) => {
        const name = enabled(params.name);
        const r = await deps.endpoint.request('mcp.resources', { name });
        return { body: { server: name, ...r } };
      },
    }),
    route({
      method: 'GET',
      path: '/api/mcp/servers/:name/resources/read',
      summary:
        'Reads one resource (?uri=, a listed one or one filled from a template): its contents, each part text, or a binary blob in base64; past 2 MiB a part is cut (text) or left out (blob: null), marked truncated. 404 when the server has no such resource.',
      query: readQuery,
      response: mcpResourceRead,
      errors: [409],
      handler: async ({ params, query }) => {
        const server = enabled(params.name);
        const r = await deps.endpoint.request('mcp.resource.read', { server, uri: query.uri });
        return { body: { server, uri: query.uri, ...r } };
      },
    }),
    route({
      method: 'GET',
      path: '/api/mcp/servers/:name/prompts',
      summary:
        'The prompts a connected server offers (name, title, description, arguments with required). A server without prompts answers an empty list.',
      response: mcpPrompts,
      errors: [409],
      handler: async ({ params }) => {
        const name = enabled(params.name);
        const r = await deps.endpoint.request('mcp.prompts', { name });
        return { body: { server: name, ...r } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/mcp/servers/:name/prompts/:prompt/get',
      summary:
        'Fills in one prompt ({"arguments": {"name": "value"}}): its messages (role, text; other parts described) and `text`, the user messages joined, to start a message with.',
      body: promptBody,
      response: mcpPromptFilled,
      errors: [409],
      handler: async ({ params, body }) => {
        const name = enabled(params.name);
        if (params.prompt.length > 256)
          throw new ApiError('invalid_request', 'A prompt name is at most 256 characters.', [
            { path: 'prompt', message: 'too long' },
          ]);
        const r = await deps.endpoint.request('mcp.prompt.get', {
          name,
          prompt: params.prompt,
          arguments: body?.arguments ?? {},
        });
        const text = r.messages
          .filter((m) => m.role === 'user')
          .map((m) => m.text)
          .join('\n\n');
        return { body: { server: name, prompt: params.prompt, ...r, text } };
      },
    }),
  ];
}
