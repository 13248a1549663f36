import { z } from 'zod';
import { isPrototypeKey } from '../own.js';
import { secret } from './secret-marker.js';

/**
 * MCP servers under `mcp.servers` in config.yml. A server is local (a command svc starts and talks
 * to over stdio) or remote (a URL spoken to over Streamable HTTP, or the older SSE transport).
 * Values in `env` and `headers` are secrets: the API shows only their names.
 */
export const mcpNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a server name is 1-64 letters, digits, dashes or underscores')
  .refine(
    (n) => !n.includes('__'),
    'a server name must not contain "__" (it separates server and tool in mcp__<server>__<tool>)',
  )
  .refine((n) => !isPrototypeKey(n), {
    error: (i) =>
      `"${String(i.input)}" is a name JavaScript objects reserve; choose another server name`,
  });

const varName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'an environment variable name is letters, digits and underscores, not starting with a digit',
  );
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'not a valid HTTP header name');

const fields = {
  command: z
    .string()
    .min(1)
    .max(4096)
    .describe('A local server: the program svc starts and speaks to over stdio.')
    .optional(),
  args: z.array(z.string().max(4096)).max(200).describe("The command's arguments.").optional(),
  env: z
    .record(varName, z.string().max(16_384))
    .describe('Environment variables of the command; secrets: answers give only their names.')
    .apply(secret)
    .optional(),
  cwd: z.string().min(1).max(4096).describe('The folder the command runs in.').optional(),
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' })
    .describe('A remote server: its address (Streamable HTTP, else the older SSE transport).')
    .optional(),
  headers: z
    .record(headerName, z.string().max(16_384))
    .describe('HTTP headers sent to a remote server; secrets: answers give only their names.')
    .apply(secret)
    .optional(),
  auth: z
    .enum(['oauth'])
    .describe("oauth: sign in with the server's OAuth flow (remote servers only).")
    .optional(),
  enabled: z.boolean().describe('Whether svc connects to it.').default(true),
  timeout_seconds: z
    .number()
    .positive()
    .max(3600)
    .describe('How long one tool call may take, in seconds.')
    .default(60),
  tools: z
    .array(z.string().min(1).max(128))
    .max(500)
    .describe('Only these tools of the server reach the agent (all when absent).')
    .optional(),
};

type Shape = {
  command?: string;
  url?: string;
  args?: unknown;
  env?: unknown;
  cwd?: unknown;
  headers?: unknown;
  auth?: unknown;
};

/** A server is exactly one of local (command) or remote (url); fields of the other kind are refused. */
function checkKind(s: Shape, ctx: z.RefinementCtx): void {
  if ((s.command === undefined) === (s.url === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [s.command === undefined ? 'command' : 'url'],
      message: 'give exactly one of a command (a local server) or a URL (a remote server)',
    });
    return;
  }
  const wrong =
    s.command !== undefined ? (['headers', 'auth'] as const) : (['args', 'env', 'cwd'] as const);
  for (const key of wrong) {
    if (s[key] !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `only for ${s.command !== undefined ? 'remote (url)' : 'local (command)'} servers`,
      });
  }
}

export const mcpServerSchema = z.strictObject(fields).superRefine(checkKind);
export type McpServer = z.infer<typeof mcpServerSchema>;
export type McpServerInput = z.input<typeof mcpServerSchema>;

export const mcpConfigSchema = z
  .strictObject({ servers: z.record(mcpNameSchema, mcpServerSchema).default({}) })
  .prefault({});

/** A change to a server: a field set to null is removed; env and headers merge key by key (null drops a key). */
export const mcpPatchSchema = z.strictObject({
  command: fields.command.unwrap().optional(),
  args: fields.args.unwrap().nullable().optional(),
  env: z
    .record(varName, z.string().max(16_384).nullable())
    .nullable()
    .describe('Merged name by name: a value sets a variable, null drops it; null drops them all.')
    .optional(),
  cwd: fields.cwd.unwrap().nullable().optional(),
  url: fields.url.unwrap().optional(),
  headers: z
    .record(headerName, z.string().max(16_384).nullable())
    .nullable()
    .describe('Merged name by name: a value sets a header, null drops it; null drops them all.')
    .optional(),
  auth: fields.auth.unwrap().nullable().optional(),
  enabled: fields.enabled.unwrap().optional(),
  timeout_seconds: fields.timeout_seconds.unwrap().optional(),
  tools: fields.tools.unwrap().nullable().optional(),
});
export type McpPatch = z.infer<typeof mcpPatchSchema>;

/** Applies a patch to a server entry (the result still has to pass mcpServerSchema). */
export function patchMcpServer(current: McpServerInput, patch: McpPatch): Record<string, unknown> {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[key];
    else if (key === 'env' || key === 'headers') {
      const merged: Record<string, string> = {
        ...((current[key] as Record<string, string> | undefined) ?? {}),
      };
      for (const [k, v] of Object.entries(value as Record<string, string | null>)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      if (Object.keys(merged).length > 0) next[key] = merged;
      else delete next[key];
    } else next[key] = value;
  }
  // Switching kind drops the other kind's fields, so a PATCH {url} turns a local server remote.
  if (patch.url !== undefined) for (const k of ['command', 'args', 'env', 'cwd']) delete next[k];
  if (patch.command !== undefined) for (const k of ['url', 'headers', 'auth']) delete next[k];
  return next;
}

/** A server as the API shows it: every field, except that env and headers give only their names. */
export const publicMcpServerSchema = z.object({
  name: z.string(),
  /** stdio: a local command; http: a remote url. */
  transport: z.enum(['stdio', 'http']),
  command: fields.command,
  args: fields.args,
  cwd: fields.cwd,
  /** Credentials in it (user info, token parameters) are masked. */
  url: z.string().optional(),
  auth: fields.auth,
  enabled: z.boolean(),
  timeout_seconds: z.number(),
  tools: fields.tools,
  env_names: z.array(z.string()),
  header_names: z.array(z.string()),
});

/** `s` is the entry as answers show it: its secrets already masked (maskSecrets). */
export function publicMcpServer(
  name: string,
  s: McpServer,
): z.output<typeof publicMcpServerSchema> {
  const { env, headers, ...rest } = s;
  return {
    name,
    transport: s.command !== undefined ? ('stdio' as const) : ('http' as const),
    ...rest,
    env_names: Object.keys(env ?? {}),
    header_names: Object.keys(headers ?? {}),
  };
}
