import type { Config } from '../../../shared/config/schema.js';
import { z } from 'zod';
import type { Paths } from '../../../shared/paths.js';
import type { Attachment } from '../../../shared/protocol/message-content.js';
import type { Db } from '../../../shared/store/db.js';
import type { TurnOrigin } from '../../../shared/protocol/ipc.js';
import type { ToolSpec } from '../providers/index.js';
import type { CallEmit } from '../../../shared/ws-publish.js';
import { noSpan, type Span } from '../../../shared/telemetry/trace.js';

/** What a tool gets besides its arguments: where it runs, what it may use, and how to stop. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  callId: string;
  workingDir: string | null;
  signal: AbortSignal;
  db: Db;
  paths: Paths;
  /** What started the turn; cron and channel turns never leave the sandbox. Unset: a person is there. */
  origin?: TurnOrigin;
  /** Live progress for clients (e.g. terminal output), on the session topic with turn and call ids. */
  emit: CallEmit;
  /** The live config, for tools that depend on it (search_history: the embeddings slot). */
  config?: () => Config;
}

export interface ToolResult {
  output: string;
  isError?: boolean;
  /** Images the call produced (saved as uploads); models that take images see them. */
  images?: Attachment[];
  /** Files the call wrote: they become the session's artifacts. */
  wrote?: string[];
}

/** What a call touches, for the permission engine: the command it runs, the path or URL it uses. */
export interface ToolSubject {
  command?: string;
  path?: string;
  url?: string;
  /** The call asks to run outside the OS sandbox, for this reason. */
  outside?: string;
  /** The tool name the permission rules judge this call by, when not its own (mcp_read_resource: the server's). */
  as?: string;
  /** More places the same call reaches (each page a replayed recording opens): each is judged too, and the strictest answer stands. */
  also?: Array<Pick<ToolSubject, 'path' | 'url'>>;
}

/** A tool: a name, a description for the model, a zod schema for its arguments, and what it does. */
export interface Tool<A = unknown> {
  name: string;
  /** What the tool does, in a sentence for a person (Settings → Tools); `description` is the model's. */
  purpose: string;
  description: string;
  args: z.ZodType<A>;
  /** The JSON schema the model sees, when it comes from elsewhere (an MCP server) rather than `args`. */
  parameters?: Record<string, unknown>;
  subject?: (args: A, ctx: ToolContext) => ToolSubject;
  run: (args: A, ctx: ToolContext) => Promise<ToolResult> | ToolResult;
}

export function defineTool<A>(tool: Tool<A>): Tool<unknown> {
  return tool as unknown as Tool<unknown>;
}

/** Decides whether a call may run (asking the user when the rules say so). */
export interface PermissionGate {
  check(
    tool: Tool,
    args: unknown,
    subject: ToolSubject,
    ctx: ToolContext,
  ): Promise<{ allowed: true } | { allowed: false; reason: string }>;
}

export const allowAll: PermissionGate = { check: async () => ({ allowed: true }) };

/** The tools a turn may call; arguments from the model are parsed by each tool's schema first. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(
    tools: Tool[],
    private readonly gate: PermissionGate = allowAll,
    /** The turn's span: each call gets one under it (a no-op when traces are off). */
    private readonly trace: Span = noSpan,
  ) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  private cachedSpecs: ToolSpec[] | undefined;

  /** The tools as the model sees them; built once, since every step of a turn sends them. */
  specs(): ToolSpec[] {
    return (this.cachedSpecs ??= [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters:
        t.parameters ??
        (z.toJSONSchema(t.args, { io: 'input', unrepresentable: 'any' }) as Record<
          string,
          unknown
        >),
    })));
  }

  /** The tools as Settings → Tools lists them: the model's spec plus the purpose for a person. */
  catalog(): Array<ToolSpec & { purpose: string }> {
    const purposes = new Map([...this.tools.values()].map((t) => [t.name, t.purpose]));
    return this.specs().map((s) => ({ ...s, purpose: purposes.get(s.name) ?? '' }));
  }

  /** Runs one call; a bad name, bad arguments or a refusal is an error result the model can act on. */
  async call(name: string, rawArgs: string, ctx: ToolContext): Promise<ToolResult> {
    const span = this.trace.child(`execute_tool ${name}`, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': ctx.callId,
    });
    try {
      const result = await this.run(name, rawArgs, ctx, span);
      span.set({ 'svc.tool.is_error': result.isError === true });
      return result;
    } catch (err) {
      span.fail(ctx.signal.aborted ? 'interrupted' : (err as Error).message);
      throw err;
    } finally {
      span.end();
    }
  }

  private async run(
    name: string,
    rawArgs: string,
    ctx: ToolContext,
    span: Span,
  ): Promise<ToolResult> {
    const tool = this.tools.get(name);
    if (!tool)
      return {
        output: `There is no tool named "${name}". Available: ${[...this.tools.keys()].join(', ')}.`,
        isError: true,
      };
    let parsedJson: unknown;
    try {
      parsedJson = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
    } catch {
      return {
        output: `The arguments for ${name} are not valid JSON: ${rawArgs.slice(0, 200)}`,
        isError: true,
      };
    }
    const args = tool.args.safeParse(parsedJson);
    if (!args.success) {
      const issues = args.error.issues
        .map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`)
        .join('; ');
      return { output: `Invalid arguments for ${name}: ${issues}`, isError: true };
    }
    const permit = await this.gate.check(
      tool,
      args.data,
      tool.subject?.(args.data, ctx) ?? {},
      ctx,
    );
    span.set({ 'svc.tool.verdict': permit.allowed ? 'allowed' : 'denied' });
    if (!permit.allowed) return { output: `permission_denied: ${permit.reason}`, isError: true };
    try {
      return await tool.run(args.data, ctx);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      return { output: `${name} failed: ${(err as Error).message}`, isError: true };
    }
  }
}
