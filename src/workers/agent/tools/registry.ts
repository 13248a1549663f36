import { z } from 'zod';
import type { ToolSpec } from '../providers/index.js';

/** What a tool gets besides its arguments: where it runs and how to stop. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  workingDir: string | null;
  signal: AbortSignal;
}

export interface ToolResult {
  output: string;
  isError?: boolean;
}

/** A tool: a name, a description for the model, a zod schema for its arguments, and what it does. */
export interface Tool<A = unknown> {
  name: string;
  description: string;
  args: z.ZodType<A>;
  run: (args: A, ctx: ToolContext) => Promise<ToolResult> | ToolResult;
}

export function defineTool<A>(tool: Tool<A>): Tool<unknown> {
  return tool as unknown as Tool<unknown>;
}

/** The tools a turn may call; arguments from the model are parsed by each tool's schema first. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(tools: Tool[]) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: z.toJSONSchema(t.args, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
    }));
  }

  list(): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
    return this.specs();
  }

  /** Runs one call; a bad tool name or bad arguments is an error result the model can correct. */
  async call(name: string, rawArgs: string, ctx: ToolContext): Promise<ToolResult> {
    const tool = this.tools.get(name);
    if (!tool) return { output: `There is no tool named "${name}". Available: ${[...this.tools.keys()].join(', ')}.`, isError: true };
    let parsedJson: unknown;
    try {
      parsedJson = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
    } catch {
      return { output: `The arguments for ${name} are not valid JSON: ${rawArgs.slice(0, 200)}`, isError: true };
    }
    const args = tool.args.safeParse(parsedJson);
    if (!args.success) {
      const issues = args.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
      return { output: `Invalid arguments for ${name}: ${issues}`, isError: true };
    }
    try {
      return await tool.run(args.data, ctx);
    } catch (err) {
      return { output: `${name} failed: ${(err as Error).message}`, isError: true };
    }
  }
}
