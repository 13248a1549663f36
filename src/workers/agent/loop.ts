import { statSync } from 'node:fs';
import { mimeOf } from '../../shared/mime.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';
import type { TurnOrigin } from '../../shared/protocol/ipc.js';
import type { AssistantContent } from '../../shared/protocol/message-content.js';
import { upsertArtifact } from '../../shared/store/artifacts.js';
import type { Db } from '../../shared/store/db.js';
import { appendMessage } from '../../shared/store/messages.js';
import type { Session } from '../../shared/store/sessions.js';
import { messageSummary, toolCallData, toolResultData } from '../../shared/event-summaries.js';
import { callEmit, type TurnPublish } from '../../shared/ws-publish.js';
import { LiveWindow } from './live-window.js';
import { historyToMessages } from './prompt.js';
import type { Provider, ReasoningEffort, ToolCall, Usage } from './providers/index.js';
import { emptyUsage } from './providers/index.js';
import type { ToolRegistry } from './tools/registry.js';

export interface LoopContext {
  /** What started the turn; tools see it (cron and channel turns never leave the sandbox). */
  origin?: TurnOrigin;
  db: Db;
  paths: Paths;
  turnId: string;
  session: Session;
  provider: Provider;
  model: string;
  maxOutputTokens: number | undefined;
  vision: boolean;
  system: () => string;
  registry: ToolRegistry;
  signal: AbortSignal;
  maxSteps: number;
  publish: TurnPublish;
  /**
   * A reply cut short (interrupted, or the provider failed mid-stream) keeps what the user already
   * saw: its text goes to the turn's end, which stores it with the end in one write.
   */
  cut: (reply: { text: string; model: string }) => void;
  /** Only messages after this seq are sent (a workflow step sees its own messages, not the run's others). */
  sinceSeq?: number;
  /** Usage recording: a call's record is written in the transaction that commits its reply. */
  meter?: { writePending(): void; committed(): void; warnDue(): void };
  /** The live config, handed to tools (search_history ranks by meaning when it names a model). */
  config?: () => Config;
  /** Called before each model call with that call's system prompt and the live window; may shrink the history (compaction). */
  beforeStep?: (system: string, window: LiveWindow) => Promise<void>;
}

export interface LoopOutcome {
  usage: Usage;
  stopReason: string;
  text: string;
  toolCalls: number;
  steps: number;
}

/** Stop after this many steps in a row that repeat the same tool calls with the same arguments. */
const REPEAT_LIMIT = 3;

/**
 * One turn: call the model, stream what it says, commit its message, run the tools it asked for,
 * commit their results, and go again until it answers without tools. Every message is committed
 * before its event is published, so a crash loses only the reply being streamed.
 */
export async function runLoop(ctx: LoopContext): Promise<LoopOutcome> {
  const usage = emptyUsage();
  let lastCallsKey = '';
  let repeats = 0;
  let toolCallCount = 0;
  let text = '';
  // Read once per turn; each step then reads only what was appended since (see LiveWindow).
  const window = new LiveWindow(ctx.db, ctx.session.id, ctx.sinceSeq ?? 0);
  for (let step = 1; step <= ctx.maxSteps; step++) {
    // Profile and memory files are read once a step: a memory written in this turn shows in the next step.
    const system = ctx.system();
    window.sync();
    await ctx.beforeStep?.(system, window);
    window.sync();
    const history = historyToMessages(window.messages, { vision: ctx.vision });
    const reply: StreamedReply = {
      text: '',
      reasoning: [],
      toolCalls: [],
      usage: emptyUsage(),
      stopReason: 'other',
    };
    try {
      await streamOnce(ctx, system, history, reply);
    } catch (err) {
      if (reply.text) ctx.cut({ text: reply.text, model: ctx.model });
      throw err;
    }
    addUsage(usage, reply.usage);
    text = reply.text;
    const content: AssistantContent = {
      text: reply.text,
      ...(reply.reasoning.length > 0 ? { reasoning: reply.reasoning } : {}),
      ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}),
      stop_reason: reply.stopReason,
      model: ctx.model,
    };
    const message = ctx.db
      .transaction(() => {
        const m = appendMessage(ctx.db, ctx.session.id, { role: 'assistant', content });
        ctx.meter?.writePending();
        return m;
      })
      .immediate();
    // Rolled back, the records stay pending: the turn's end writes them on their own.
    ctx.meter?.committed();
    ctx.meter?.warnDue();
    ctx.publish('message.committed', { message: messageSummary(message) });
    if (reply.toolCalls.length === 0)
      return { usage, stopReason: reply.stopReason, text, toolCalls: toolCallCount, steps: step };

    const key = JSON.stringify(reply.toolCalls.map((c) => [c.name, c.arguments]));
    repeats = key === lastCallsKey ? repeats + 1 : 1;
    lastCallsKey = key;
    for (const call of reply.toolCalls) {
      ctx.signal.throwIfAborted();
      toolCallCount++;
      const result =
        repeats >= REPEAT_LIMIT
          ? {
              output: `Not run: the same call was made ${repeats} times in a row with the same arguments.`,
              isError: true,
            }
          : await ctx.registry.call(call.name, call.arguments, {
              sessionId: ctx.session.id,
              turnId: ctx.turnId,
              callId: call.id,
              workingDir: ctx.session.working_dir,
              origin: ctx.origin,
              signal: ctx.signal,
              db: ctx.db,
              paths: ctx.paths,
              emit: callEmit(ctx.publish, call.id),
              ...(ctx.config ? { config: ctx.config } : {}),
            });
      for (const file of result.wrote ?? []) recordArtifact(ctx, file, call.id);
      const toolMessage = appendMessage(ctx.db, ctx.session.id, {
        role: 'tool',
        content: {
          tool_call_id: call.id,
          name: call.name,
          output: result.output,
          ...(result.isError ? { is_error: true } : {}),
          ...(result.images?.length ? { images: result.images } : {}),
        },
      });
      ctx.publish(
        'turn.tool_result',
        toolResultData(call, result.output, result.isError === true, toolMessage),
      );
    }
    if (repeats >= REPEAT_LIMIT)
      return {
        usage,
        stopReason: 'repeated_tool_calls',
        text,
        toolCalls: toolCallCount,
        steps: step,
      };
  }
  return { usage, stopReason: 'max_steps', text, toolCalls: toolCallCount, steps: ctx.maxSteps };
}

interface StreamedReply {
  text: string;
  reasoning: Array<{ text: string; signature?: string; redacted?: string }>;
  toolCalls: ToolCall[];
  usage: Usage;
  stopReason: string;
}

async function streamOnce(
  ctx: LoopContext,
  system: string,
  history: ReturnType<typeof historyToMessages>,
  out: StreamedReply,
): Promise<void> {
  let reasoningOpen: { text: string; signature?: string } | undefined;
  const showReasoning = ctx.session.show_reasoning;
  const events = ctx.provider.stream({
    model: ctx.model,
    messages: [{ role: 'system', content: system }, ...history],
    tools: ctx.registry.specs(),
    maxTokens: ctx.maxOutputTokens,
    reasoningEffort: ctx.session.reasoning_effort as ReasoningEffort,
    signal: ctx.signal,
  });
  for await (const ev of events) {
    switch (ev.type) {
      case 'text':
        out.text += ev.text;
        ctx.publish('turn.text_delta', { delta: ev.text });
        break;
      case 'reasoning':
        reasoningOpen ??= { text: '' };
        reasoningOpen.text += ev.text;
        if (showReasoning) ctx.publish('turn.reasoning_delta', { delta: ev.text });
        break;
      case 'reasoning_end':
        if (reasoningOpen)
          out.reasoning.push({
            ...reasoningOpen,
            ...(ev.signature ? { signature: ev.signature } : {}),
          });
        reasoningOpen = undefined;
        break;
      case 'reasoning_redacted':
        out.reasoning.push({ text: '', redacted: ev.data });
        break;
      case 'tool_call_start':
        ctx.publish('turn.tool_call_started', { index: ev.index, call_id: ev.id, name: ev.name });
        break;
      case 'tool_call_delta':
        break; // arguments are shown whole, once complete
      case 'tool_call_end':
        out.toolCalls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
        ctx.publish('turn.tool_call', toolCallData(ev));
        break;
      case 'usage':
        out.usage = ev.usage;
        break;
      case 'done':
        out.stopReason = ev.stopReason;
        break;
    }
  }
  if (reasoningOpen) out.reasoning.push(reasoningOpen);
}

/** A file a tool wrote becomes one of the session's artifacts. */
function recordArtifact(ctx: LoopContext, file: string, callId: string): void {
  try {
    const size = statSync(file).size;
    const artifact = upsertArtifact(ctx.db, ctx.session.id, {
      path: file,
      size,
      mime: mimeOf(file),
    });
    ctx.publish('artifact.updated', { call_id: callId, artifact });
  } catch {
    // the file is gone again (deleted by a later command): nothing to list
  }
}

function addUsage(total: Usage, u: Usage): void {
  total.input += u.input;
  total.output += u.output;
  total.cachedInput += u.cachedInput;
  total.cacheWrite += u.cacheWrite;
  if (u.reasoning !== undefined) total.reasoning = (total.reasoning ?? 0) + u.reasoning;
}
