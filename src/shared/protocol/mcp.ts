import { lazyEntries } from './lazy.js';
import { z } from 'zod';
import { mcpNameSchema, mcpPatchSchema } from '../config/mcp.js';

/** What the mcp worker says about one server: its connection and its tools. */
export const mcpToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type McpTool = z.infer<typeof mcpToolSchema>;

export const mcpStatusSchema = z.object({
  name: z.string(),
  status: z.enum(['connecting', 'connected', 'error', 'disabled']),
  /** The last error in words (kept while reconnecting). */
  error: z.string().nullable(),
  connected_at: z.string().nullable(),
  /** Which transport carried the connection: stdio, streamable_http or sse. */
  transport: z.enum(['stdio', 'streamable_http', 'sse']).nullable(),
  tools: z.array(mcpToolSchema),
  /** The server wants the user to sign in (OAuth); the connection waits for it. */
  needs_auth: z.boolean(),
  /**
   * The last lines the server process wrote to stderr before it failed (stdio only; its env
   * values masked), or null: a server that fails to start says why here.
   */
  stderr_tail: z.string().nullable(),
});
export type McpStatus = z.infer<typeof mcpStatusSchema>;

/** A tool result, already reduced to what the agent uses: text, and images. */
export const mcpContentSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), mime: z.string(), data: z.string() }),
]);
export type McpContent = z.infer<typeof mcpContentSchema>;

/** A resource a server offers (resources/list). */
export const mcpResourceSchema = z.object({
  uri: z.string(),
  name: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  mime_type: z.string().nullable(),
  size: z.number().nullable(),
});
export type McpResource = z.infer<typeof mcpResourceSchema>;

/** A family of resources by URI template (resources/templates/list), e.g. `file:///{path}`. */
export const mcpResourceTemplateSchema = z.object({
  uri_template: z.string(),
  name: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  mime_type: z.string().nullable(),
});

/** A prompt a server offers (prompts/list), with the arguments it takes. */
export const mcpPromptSchema = z.object({
  name: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  arguments: z.array(
    z.object({ name: z.string(), description: z.string().nullable(), required: z.boolean() }),
  ),
});
export type McpPrompt = z.infer<typeof mcpPromptSchema>;

/**
 * One part of a read resource (resources/read): text, or a binary blob in base64. A part larger
 * than the worker passes on is cut (text) or left out (blob, `blob` null), and says so.
 */
export const mcpResourceContentSchema = z.object({
  uri: z.string(),
  mime_type: z.string().nullable(),
  text: z.string().optional(),
  blob: z.string().nullable().optional(),
  /** Bytes of the whole part as the server sent it. */
  size: z.number().int(),
  truncated: z.boolean(),
});
export type McpResourceContent = z.infer<typeof mcpResourceContentSchema>;

/** A prompt filled in (prompts/get): its messages as text (other parts described in words). */
export const mcpPromptResultSchema = z.object({
  description: z.string().nullable(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), text: z.string() })),
});
export type McpPromptResult = z.infer<typeof mcpPromptResultSchema>;

/** What a resource read names: the server and the URI (a linked one, or one filled from a template). */
export const mcpResourceRef = z.object({
  server: mcpNameSchema,
  uri: z.string().min(1).max(8192),
});
export type McpResourceRef = z.infer<typeof mcpResourceRef>;

const ack = z.object({});
const rawServer = z.record(z.string(), z.unknown());

/** The request types of the MCP feature; ipc.ts spreads them into its table. */
export const mcpRequestMakers = {
  /** gateway → supervisor: config.yml edits of mcp.servers (the gateway validated the entry). */
  'config.mcp.create': () => ({
    payload: z.object({ name: mcpNameSchema, server: rawServer }),
    result: ack,
  }),
  'config.mcp.update': () => ({
    payload: z.object({ name: mcpNameSchema, patch: mcpPatchSchema }),
    result: ack,
  }),
  /** Moves the entry to the trash. */
  'config.mcp.delete': () => ({
    payload: z.object({ name: mcpNameSchema }),
    result: z.object({ trash_id: z.string() }),
  }),
  /** All or nothing: every entry is added, or none. */
  'config.mcp.import': () => ({
    payload: z.object({ servers: z.record(mcpNameSchema, rawServer) }),
    result: ack,
  }),
  /** gateway → supervisor: restore a trash item whose place is config.yml (only the supervisor writes it). */
  'trash.restore': () => ({
    payload: z.object({
      id: z.string().max(64),
      options: z.object({
        as_new: z.boolean().optional(),
        new_name: z.string().max(200).optional(),
      }),
    }),
    result: z.object({ restored_to: z.string() }),
  }),
  /** gateway → mcp worker. */
  'mcp.status': () => ({
    payload: z.object({}),
    result: z.object({ servers: z.array(mcpStatusSchema) }),
  }),
  'mcp.reconnect': () => ({ payload: z.object({ name: mcpNameSchema }), result: mcpStatusSchema }),
  /** gateway → mcp worker: a server's resources and resource templates. */
  'mcp.resources': () => ({
    payload: z.object({ name: mcpNameSchema }),
    result: z.object({
      resources: z.array(mcpResourceSchema),
      templates: z.array(mcpResourceTemplateSchema),
    }),
  }),
  /** gateway → mcp worker: a server's prompts. */
  'mcp.prompts': () => ({
    payload: z.object({ name: mcpNameSchema }),
    result: z.object({ prompts: z.array(mcpPromptSchema) }),
  }),
  /** gateway → mcp worker: one prompt filled in with its arguments. */
  'mcp.prompt.get': () => ({
    payload: z.object({
      name: mcpNameSchema,
      prompt: z.string().min(1).max(256),
      arguments: z.record(z.string().max(256), z.string().max(65_536)),
    }),
    result: mcpPromptResultSchema,
  }),
  /** gateway or agent → mcp worker: reads one resource (the API, an attached resource, mcp_read_resource). */
  'mcp.resource.read': () => ({
    payload: mcpResourceRef,
    result: z.object({ contents: z.array(mcpResourceContentSchema) }),
  }),
  /** agent → mcp worker: the tools of every connected server (after each server's allow-list). */
  'mcp.tools': () => ({
    payload: z.object({}),
    result: z.object({
      servers: z.array(
        z.object({
          name: z.string(),
          tools: z.array(mcpToolSchema),
          /** The server offers resources (the agent may read what it links). */
          resources: z.boolean().optional(),
        }),
      ),
    }),
  }),
  'mcp.call': () => ({
    payload: z.object({
      call_id: z.string().min(1).max(128),
      server: mcpNameSchema,
      tool: z.string().min(1).max(128),
      arguments: z.record(z.string(), z.unknown()),
    }),
    result: z.object({ content: z.array(mcpContentSchema), is_error: z.boolean() }),
  }),
  /**
   * agent → (supervisor) → mcp worker: where to open a direct channel for tool calls (a unix
   * socket) and a single-use token for it, so a call need not take two extra hops through the
   * supervisor. The supervisor still starts and stops the mcp worker; the channel dies with it.
   */
  'mcp.direct': () => ({
    payload: z.object({}),
    result: z.object({ path: z.string().min(1).max(4096), token: z.string().min(16).max(128) }),
  }),
  /** agent → mcp worker: the turn was interrupted; the server gets the protocol's cancellation. */
  'mcp.cancel': () => ({
    payload: z.object({ call_id: z.string().min(1).max(128) }),
    result: z.object({ cancelled: z.boolean() }),
  }),
  /**
   * gateway → mcp worker: the user asks to sign in to a remote server (OAuth). Answers where to
   * send the browser, or null when stored tokens could be refreshed instead (then it reconnects).
   */
  'mcp.oauth.start': () => ({
    payload: z.object({ name: mcpNameSchema, redirect_url: z.url({ protocol: /^https?$/ }) }),
    result: z.object({ authorization_url: z.string().nullable() }),
  }),
  /** gateway → mcp worker: the authorization server sent the browser back with these (state is single use). */
  'mcp.oauth.finish': () => ({
    payload: z.object({
      state: z.string().min(1).max(512),
      code: z.string().min(1).max(4096).optional(),
      error: z.string().max(200).optional(),
    }),
    result: z.object({ name: mcpNameSchema, status: mcpStatusSchema }),
  }),
} as const;
export const mcpRequestDefs = lazyEntries(mcpRequestMakers);

export const mcpEventMakers = {
  /** child → supervisor: the process groups it started (MCP servers); killed if the child dies. */
  'child.groups': () => z.object({ pgids: z.array(z.number().int().positive()) }),
} as const;
export const mcpEventDefs = lazyEntries(mcpEventMakers);

/** The first line an agent sends on a direct channel, and the mcp worker's answer to a valid one. */
export const mcpDirectHello = z.object({ token: z.string().min(16).max(128) });
export const mcpDirectWelcome = z.object({ ok: z.literal(true) });
