import { z } from 'zod';
import {
  mcpNameSchema,
  mcpPatchSchema,
  mcpServerSchema,
  patchMcpServer,
  publicMcpServer,
  type McpServer,
} from '../../../shared/config/mcp.js';
import { maskSecrets, unmaskSecrets } from '../../../shared/config/secrets.js';
import { ApiError, invalidInput } from '../../../shared/errors.js';
import { mcpServerLabels } from '../../../shared/form-labels.js';
import {
  mcpCreateBodies,
  mcpServerCreated,
  mcpServerDeleted,
  mcpServerList,
  mcpServerView,
  type McpServerView,
} from '../../../shared/protocol/answers/mcp.js';
import type { McpStatus } from '../../../shared/protocol/mcp.js';
import { getTrashItem, trashView } from '../../../shared/store/trash.js';
import type { Deps } from '../../deps.js';
import { requestBodyDoc } from '../../request-doc.js';
import { route, type Route } from '../../route.js';
import { mcpCatalogRoutes } from './catalog.js';

const nameQuery = z.strictObject({ name: mcpNameSchema });
const createBody = z
  .looseObject({})
  .describe(
    'One server {"name": …, "command"|"url": …, …}, or the {"mcpServers": {…}} document other MCP clients use (all or nothing).',
  );

/** The name is checked alone (before the entry): its issues' path is under `name`. */
const nameLabel = { name: mcpServerLabels.name };

/** Keys other MCP clients write that svc does not use: taken without complaint, and ignored. */
const IGNORED = new Set(['alwaysAllow', 'autoApprove', 'description', 'transportType']);

/**
 * MCP servers: their configuration (config.yml, written by the supervisor), their live status and
 * tools (from the mcp worker), reconnect. Secret values of env and headers are never answered.
 */
export function mcpRoutes(deps: Deps): Route[] {
  const servers = () => deps.config().mcp.servers;
  const serverOr404 = (name: string): McpServer => {
    const s = Object.hasOwn(servers(), name) ? servers()[name] : undefined;
    if (!s)
      throw new ApiError(
        'not_found',
        `There is no MCP server "${name}"; GET /api/mcp/servers lists them.`,
      );
    return s;
  };
  /** Live status from the mcp worker; when it is not running (no enabled server, or restarting) none. */
  const live = async (): Promise<Map<string, McpStatus>> => {
    if (!Object.values(servers()).some((s) => s.enabled)) return new Map();
    try {
      const r = await deps.endpoint.request('mcp.status', {});
      return new Map(r.servers.map((s) => [s.name, s]));
    } catch {
      return new Map();
    }
  };
  const view = (name: string, s: McpServer, status: McpStatus | undefined): McpServerView => ({
    // A url's credentials (user info, token parameters) masked like every config answer's.
    ...publicMcpServer(name, maskSecrets(mcpServerSchema, s)),
    status: !s.enabled ? 'disabled' : (status?.status ?? 'connecting'),
    error: s.enabled ? (status?.error ?? null) : null,
    connected_at: s.enabled ? (status?.connected_at ?? null) : null,
    connected_via: s.enabled ? (status?.transport ?? null) : null,
    tools: s.enabled
      ? (status?.tools ?? []).map((t) => ({ name: t.name, description: t.description }))
      : [],
    /** Waits for the user to sign in (OAuth): POST /api/mcp/servers/{name}/oauth/start. */
    needs_auth: s.enabled ? (status?.needs_auth ?? false) : false,
    /** What a failed stdio server last wrote to stderr (its env values masked), or null. */
    stderr_tail: s.enabled ? (status?.stderr_tail ?? null) : null,
  });
  const one = async (name: string) => view(name, serverOr404(name), (await live()).get(name));
  const list = async () => {
    const statuses = await live();
    return Object.entries(servers()).map(([name, s]) => view(name, s, statuses.get(name)));
  };
  const changed = (names: string[]) => deps.publish('mcp', 'mcp.config', { names });

  const create = async (body: Record<string, unknown>) => {
    if ('mcpServers' in body) {
      const entries = parseImport(body);
      await deps.endpoint.request('config.mcp.import', { servers: entries });
      changed(Object.keys(entries));
      return { status: 201, body: { imported: Object.keys(entries), servers: await list() } };
    }
    const { name, ...rest } = body;
    const n = mcpNameSchema.safeParse(name);
    if (!n.success) {
      if (name === undefined)
        throw invalid(
          'name',
          'required',
          'Give the server a name ({"name": "…"}), or send an {"mcpServers": {…}} document.',
        );
      throw invalidInput(n.error, { what: 'MCP server', prefix: 'name', labels: nameLabel });
    }
    checkServer(rest, '');
    await deps.endpoint.request('config.mcp.create', { name: n.data, server: rest });
    changed([n.data]);
    return { status: 201, body: await one(n.data) };
  };
  const update = async (name: string, given: z.infer<typeof mcpPatchSchema>) => {
    const current = serverOr404(name);
    // env or header values sent back masked keep what they stand for.
    const patch = unmaskSecrets(mcpServerSchema, current, given);
    checkServer(patchMcpServer(current, patch), '');
    await deps.endpoint.request('config.mcp.update', { name, patch });
    changed([name]);
    return { body: await one(name) };
  };
  const remove = async (name: string) => {
    serverOr404(name);
    const { trash_id } = await deps.endpoint.request('config.mcp.delete', { name });
    changed([name]);
    const item = getTrashItem(deps.db, trash_id);
    if (item)
      deps.publish('trash', 'trash.added', trashView(item, deps.config().trash.retention_days));
    return { body: { deleted: name, trash_id } };
  };

  return [
    ...mcpCatalogRoutes(deps, serverOr404),
    route({
      method: 'GET',
      path: '/api/mcp/servers',
      summary:
        'Every MCP server: transport, enabled, status (connecting, connected, error, disabled), last error, tools. Secret values are never shown, only the names of env and headers.',
      response: mcpServerList,
      handler: async () => ({ body: { servers: await list() } }),
    }),
    route({
      method: 'POST',
      path: '/api/mcp/servers',
      summary:
        'Adds a server ({"name", "command" or "url", …}), or imports an {"mcpServers": {…}} document all or nothing. A connection failure shows in the status, never as a failed request.',
      body: createBody,
      requestBody: () => requestBodyDoc({ 'application/json': mcpCreateBodies() }, true),
      status: 201,
      response: mcpServerCreated,
      handler: ({ body }) => create(body),
    }),
    route({
      method: 'PATCH',
      path: '/api/mcp/servers',
      summary:
        'Changes fields of the server named in the body ({"name", …fields}); same as PATCH /api/mcp/servers/{name}.',
      body: mcpPatchSchema.extend({ name: mcpNameSchema }),
      fields: { what: 'MCP server', labels: mcpServerLabels },
      response: mcpServerView,
      handler: ({ body }) => {
        const { name, ...patch } = body;
        return update(name, patch);
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/mcp/servers',
      summary: 'Moves the server named by ?name= to the trash (restorable).',
      query: nameQuery,
      response: mcpServerDeleted,
      handler: ({ query }) => remove(query.name),
    }),
    route({
      method: 'GET',
      path: '/api/mcp/servers/:name',
      summary: 'One MCP server with its status and tools.',
      response: mcpServerView,
      handler: ({ params }) => one(params.name ?? '').then((body) => ({ body })),
    }),
    route({
      method: 'PATCH',
      path: '/api/mcp/servers/:name',
      summary:
        'Changes fields of a server (enabled too); null removes a field; env and headers merge key by key (null drops one).',
      body: mcpPatchSchema,
      fields: { what: 'MCP server', labels: mcpServerLabels },
      response: mcpServerView,
      handler: ({ params, body }) => update(params.name ?? '', body),
    }),
    route({
      method: 'DELETE',
      path: '/api/mcp/servers/:name',
      summary: 'Moves a server to the trash; POST /api/trash/{id}/restore brings it back.',
      response: mcpServerDeleted,
      handler: ({ params }) => remove(params.name ?? ''),
    }),
    route({
      method: 'POST',
      path: '/api/mcp/servers/:name/reconnect',
      summary:
        'Drops the connection and connects again now; answers the new status (a failure shows in it).',
      body: z.strictObject({}).optional(),
      response: mcpServerView,
      errors: [409],
      handler: async ({ params }) => {
        const name = params.name ?? '';
        const s = serverOr404(name);
        if (!s.enabled)
          throw new ApiError(
            'conflict',
            `The MCP server "${name}" is disabled; enable it (PATCH {"enabled": true}) instead of reconnecting.`,
          );
        const status = await deps.endpoint.request('mcp.reconnect', { name });
        return { body: view(name, s, status) };
      },
    }),
  ];
}

function invalid(path: string, message: string, sentence?: string): ApiError {
  return new ApiError(
    'invalid_request',
    sentence ?? `Invalid MCP server: ${path || '(body)'}: ${message}.`,
    [{ path, message }],
  );
}

/** Validates one entry; issues are named under `prefix` (the import's entry). */
function checkServer(raw: unknown, prefix: string): void {
  const r = mcpServerSchema.safeParse(raw);
  if (r.success) return;
  throw invalidInput(r.error, {
    what: `MCP server${prefix ? ' in the import (nothing was imported)' : ''}`,
    prefix,
    // The form's labels for a server of the form; an import names the keys the person pasted.
    ...(prefix ? {} : { labels: mcpServerLabels }),
  });
}

/**
 * The `{"mcpServers": {...}}` document of other MCP clients, turned into svc entries: `disabled`
 * becomes `enabled`, `timeout` (seconds) becomes `timeout_seconds`, `type` only has to agree.
 * Any invalid entry rejects the whole document, naming the entry and the field.
 */
function parseImport(body: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const extra = Object.keys(body).filter((k) => k !== 'mcpServers');
  if (extra.length > 0)
    throw invalid(
      extra[0]!,
      'unknown field',
      `An import document has only "mcpServers"; found ${extra.map((k) => `"${k}"`).join(', ')} as well.`,
    );
  const doc = body.mcpServers;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw invalid(
      'mcpServers',
      'expected an object of servers by name',
      'Expected {"mcpServers": {"<name>": {…}, …}}.',
    );
  const entries = Object.entries(doc as Record<string, unknown>);
  if (entries.length === 0)
    throw invalid('mcpServers', 'no servers', 'The mcpServers document names no server.');
  if (entries.length > 100)
    throw invalid('mcpServers', 'too many servers', 'An import takes at most 100 servers.');
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, value] of entries) {
    const where = `mcpServers.${name}`;
    const n = mcpNameSchema.safeParse(name);
    if (!n.success)
      throw invalid(
        where,
        n.error.issues[0]?.message ?? 'invalid name',
        `Invalid MCP server name "${name}" in the import (nothing was imported): ${n.error.issues[0]?.message}.`,
      );
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw invalid(
        where,
        'expected an object',
        `${where} must be an object (nothing was imported).`,
      );
    const { type, disabled, timeout, ...rest } = value as Record<string, unknown>;
    const entry: Record<string, unknown> = Object.fromEntries(
      Object.entries(rest).filter(([k]) => !IGNORED.has(k)),
    );
    if (type !== undefined) {
      const stdio = type === 'stdio';
      const remote =
        type === 'http' ||
        type === 'sse' ||
        type === 'streamable-http' ||
        type === 'streamableHttp';
      if (!stdio && !remote)
        throw invalid(
          `${where}.type`,
          'must be stdio, http, sse or streamable-http',
          `${where}.type: "${String(type)}" is not a transport svc knows (stdio, http, sse, streamable-http); nothing was imported.`,
        );
      if (stdio !== (entry.command !== undefined))
        throw invalid(
          `${where}.type`,
          `type ${String(type)} does not fit the other fields`,
          `${where}.type is ${String(type)} but the entry ${stdio ? 'has no command' : 'has no url'}; nothing was imported.`,
        );
    }
    if (disabled !== undefined) {
      if (typeof disabled !== 'boolean')
        throw invalid(
          `${where}.disabled`,
          'must be true or false',
          `${where}.disabled must be true or false; nothing was imported.`,
        );
      entry.enabled = !disabled;
    }
    if (timeout !== undefined) entry.timeout_seconds = timeout;
    checkServer(entry, where);
    out[n.data] = entry;
  }
  return out;
}
