import { z } from 'zod';
import { mcpNameSchema, mcpServerSchema, publicMcpServerSchema } from '../../config/mcp.js';
import { mcpRequestDefs, mcpStatusSchema } from '../mcp.js';

/**
 * The answers of /api/mcp (src/gateway/routes/mcp), from the config and worker schemas they are
 * made of. zod and node-free, like answers.ts.
 */

/** A server: its configuration (secret values never, only their names) and its live state. */
export const mcpServerView = z.lazy(() =>
  publicMcpServerSchema
    .extend({
      status: mcpStatusSchema.shape.status,
      error: mcpStatusSchema.shape.error,
      connected_at: mcpStatusSchema.shape.connected_at,
      /** Which transport carried the connection (null while not connected). */
      connected_via: mcpStatusSchema.shape.transport,
      /** The tools it offers now (empty while not connected). */
      tools: z.array(z.object({ name: z.string(), description: z.string() })),
      /** Waits for the user to sign in (OAuth): POST /api/mcp/servers/{name}/oauth/start. */
      needs_auth: z.boolean(),
      /** What a failed stdio server last wrote to stderr (its env values masked), or null. */
      stderr_tail: mcpStatusSchema.shape.stderr_tail,
    })
    .meta({ id: 'McpServer' }),
);
export type McpServerView = z.infer<typeof mcpServerView>;

export const mcpServerList = z.lazy(() => z.object({ servers: z.array(mcpServerView) }));
/** POST: the server added, or the names an import added and every server after it. */
export const mcpServerCreated = z.lazy(() =>
  z.union([
    mcpServerView,
    z.object({ imported: z.array(z.string()), servers: z.array(mcpServerView) }),
  ]),
);
export const mcpServerDeleted = z.lazy(() =>
  z.object({ deleted: z.string(), trash_id: z.string() }),
);

const server = { server: z.string() };
export const mcpResources = z.lazy(() =>
  z.object({
    ...server,
    ...mcpRequestDefs['mcp.resources'].result.shape,
  }),
);
export const mcpResourceRead = z.lazy(() =>
  z.object({
    ...server,
    uri: z.string(),
    ...mcpRequestDefs['mcp.resource.read'].result.shape,
  }),
);
export const mcpPrompts = z.lazy(() =>
  z.object({ ...server, ...mcpRequestDefs['mcp.prompts'].result.shape }),
);
export const mcpPromptFilled = z.lazy(() =>
  z.object({
    ...server,
    prompt: z.string(),
    ...mcpRequestDefs['mcp.prompt.get'].result.shape,
    /** The user messages joined, to start a message with. */
    text: z.string(),
  }),
);
export const mcpOAuthStarted = z.lazy(() =>
  z.object({
    name: z.string(),
    /** Where to send the browser; null when stored tokens could be refreshed instead. */
    authorization_url: z.string().nullable(),
    /** Where the authorization server sends the browser back (/api/mcp/oauth/callback). */
    redirect_url: z.string(),
  }),
);

/**
 * The body of POST /api/mcp/servers for the document: a local or a remote server (the kinds
 * mcpServerSchema tells apart: the other kind's fields are refused), or an import document.
 */
export function mcpCreateBodies(): z.ZodType {
  const { command, args, env, cwd, url, headers, auth, ...common } = mcpServerSchema.shape;
  const name = mcpNameSchema.describe(
    'The name of the server, used in its tools: mcp__<name>__<tool>.',
  );
  const local = z
    .strictObject({ name, command: command.unwrap(), args, env, cwd, ...common })
    .describe('A local server: a command svc starts.');
  const remote = z
    .strictObject({ name, url: url.unwrap(), headers, auth, ...common })
    .describe('A remote server: an address svc connects to.');
  const entry = z
    .looseObject({
      type: z
        .enum(['stdio', 'http', 'sse', 'streamable-http', 'streamableHttp'])
        .optional()
        .describe('Must agree with the other fields: stdio with command, the others with url.'),
      disabled: z.boolean().optional().describe('Becomes enabled: false.'),
      timeout: z.number().optional().describe('Becomes timeout_seconds.'),
    })
    .describe(
      "An entry as other MCP clients write it: a server's fields (command or url, args, env, cwd, headers, …), plus type, disabled and timeout; alwaysAllow, autoApprove, description and transportType are ignored.",
    );
  const imported = z
    .strictObject({ mcpServers: z.record(mcpNameSchema, entry) })
    .describe(
      'The {"mcpServers": {…}} document other MCP clients use: 1-100 servers by name, added all or nothing (one invalid entry refuses the whole document, naming it).',
    );
  return z.union([local, remote, imported]);
}
