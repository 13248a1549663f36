import type { Config, ModelEntry } from '../../shared/config/schema.js';
import { log } from '../../shared/log.js';
import { DEFAULT_MAX_TOKENS, thinkingFields } from '../../shared/providers/anthropic.js';
import { costOf, pricesOf } from '../../shared/providers/prices.js';
import { resolveModel } from '../../shared/providers/resolve.js';
import type { Db } from '../../shared/store/db.js';
import { insertUsage, type UsageOrigin, type UsageRecordInput } from '../../shared/store/usage.js';
import {
  checkCall,
  dueWarnings,
  limitStates,
  type BudgetRefusal,
  type CallEstimate,
  type CallScope,
  type LimitState,
} from '../../shared/usage/budgets.js';
import type { ChatRequest, Completion, Provider, StreamEvent, Usage } from './providers/index.js';
import { noSpan, type Span } from '../../shared/telemetry/trace.js';

/** A model call that was not made: it could have crossed a budget. */
export class BudgetExceeded extends Error {
  constructor(readonly refusal: BudgetRefusal) {
    super(refusal.message);
  }
}

export interface MeterContext {
  db: Db;
  config: () => Config;
  scope: CallScope;
  turnId: string | null;
  /** The turn's origin; compaction and titling calls say so instead. */
  origin: UsageOrigin;
  workflowRun: string | null;
  /** Sends a usage.warning event. */
  warn: (state: LimitState) => void;
  /** The turn's span: each model call gets one under it, with what it used (no-op when traces are off). */
  trace?: Span;
}

export interface MeteredModel {
  /** The config entry's id (null when the entry is not in config, e.g. a probe). */
  modelId: string | null;
  entry: ModelEntry;
  /** Set for side jobs whose calls are not the turn's own conversation. */
  purpose?: 'compaction' | 'titling';
}

/**
 * Every model call of a turn goes through here: the budgets are checked before the call (a call
 * that could cross one is not made), and what the provider reported is recorded after it.
 * Streamed calls that end well wait in `pending` so the loop writes them in the transaction that
 * commits the reply; anything else is written at once. `flush` also sends due warnings.
 */
export class Meter {
  private pending: UsageRecordInput[] = [];

  constructor(private readonly ctx: MeterContext) {}

  wrap(inner: Provider, model: MeteredModel): Provider {
    return {
      stream: (req) => this.stream(inner, model, req),
      complete: (req) => this.complete(inner, model, req),
    };
  }

  /** Writes the waiting records; inside the reply's transaction, followed by `committed()`. */
  writePending(): void {
    for (const r of this.pending) insertUsage(this.ctx.db, r);
  }

  /** The transaction that wrote the waiting records committed: they are no longer waiting. */
  committed(): void {
    this.pending = [];
  }

  /** Writes the waiting records on their own (a call that failed, the end of a turn). */
  flush(): void {
    if (this.pending.length === 0) return;
    this.ctx.db.transaction(() => this.writePending()).immediate();
    this.committed();
  }

  /** Sends the usage.warning events that became due; outside any transaction. */
  warnDue(): void {
    const budgets = this.ctx.config().budgets;
    if (!hasLimits(budgets)) return;
    try {
      const states = limitStates(this.ctx.db, budgets, this.ctx.scope);
      for (const s of dueWarnings(this.ctx.db, states, budgets.warn_at)) this.ctx.warn(s);
    } catch (err) {
      log.warn('could not check the budgets for warnings', { error: (err as Error).message });
    }
  }

  private async *stream(
    inner: Provider,
    model: MeteredModel,
    req: ChatRequest,
  ): AsyncGenerator<StreamEvent> {
    const estimate = this.check(model, req);
    const started = performance.now();
    const span = this.span(model, req, true);
    let usage: Usage | null = null;
    let done = false;
    try {
      for await (const ev of inner.stream(req)) {
        if (ev.type === 'usage') usage = ev.usage;
        else if (ev.type === 'done') done = true;
        yield ev;
      }
    } finally {
      const status = done ? 'ok' : req.signal?.aborted ? 'interrupted' : 'error';
      const row = this.row(model, true, status, usage, estimate, started);
      this.pending.push(row);
      endCallSpan(span, row);
      if (!done) this.writeNow();
    }
  }

  private async complete(
    inner: Provider,
    model: MeteredModel,
    req: ChatRequest,
  ): Promise<Completion> {
    const estimate = this.check(model, req);
    const started = performance.now();
    const span = this.span(model, req, false);
    let status: UsageRecordInput['status'] = 'error';
    let usage: Usage | null = null;
    try {
      const c = await inner.complete(req);
      status = 'ok';
      usage = c.usage;
      return c;
    } catch (err) {
      if (req.signal?.aborted) status = 'interrupted';
      throw err;
    } finally {
      const row = this.row(model, false, status, usage, estimate, started);
      this.pending.push(row);
      endCallSpan(span, row);
      this.writeNow();
    }
  }

  /** A model call's span, named and keyed as OpenTelemetry's GenAI conventions say. */
  private span(model: MeteredModel, req: ChatRequest, streamed: boolean): Span {
    return (this.ctx.trace ?? noSpan).child(`chat ${model.entry.model}`, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': model.entry.provider,
      'gen_ai.request.model': model.entry.model,
      'gen_ai.request.max_tokens': req.maxTokens,
      'svc.model_id': model.modelId,
      'svc.usage.origin': model.purpose ?? this.ctx.origin,
      'svc.streamed': streamed,
    });
  }

  private writeNow(): void {
    try {
      this.flush();
    } catch (err) {
      log.warn('could not record the usage of a model call', { error: (err as Error).message });
    }
    this.warnDue();
  }

  /** Throws BudgetExceeded when the call could cross a limit; answers the call's estimate. */
  private check(model: MeteredModel, req: ChatRequest): CallEstimate {
    const estimate = estimateCall(model.entry, req);
    const budgets = this.ctx.config().budgets;
    if (!hasLimits(budgets)) return estimate;
    const refusal = checkCall(limitStates(this.ctx.db, budgets, this.ctx.scope), estimate);
    if (refusal) throw new BudgetExceeded(refusal);
    return estimate;
  }

  private row(
    model: MeteredModel,
    streamed: boolean,
    status: UsageRecordInput['status'],
    usage: Usage | null,
    estimate: CallEstimate,
    started: number,
  ): UsageRecordInput {
    const prices = pricesOf(model.entry);
    const tokens = usage && {
      input: usage.input,
      cachedInput: usage.cachedInput,
      cacheWrite: usage.cacheWrite,
      output: usage.output,
      reasoning: usage.reasoning ?? null,
    };
    return {
      at: new Date().toISOString(),
      session_id: this.ctx.scope.sessionId,
      turn_id: this.ctx.turnId,
      model_id: model.modelId,
      provider: model.entry.provider,
      model: model.entry.model,
      origin: model.purpose ?? this.ctx.origin,
      channel: this.ctx.scope.channel,
      cron_task: this.ctx.scope.cronTask,
      workflow_run: this.ctx.workflowRun,
      status,
      streamed,
      tokens,
      estimated_tokens: estimate.tokens,
      cost_usd: tokens && prices ? costOf(tokens, prices.prices) : null,
      latency_ms: performance.now() - started,
    };
  }
}

/** What a call used, on its span: tokens as the provider reported them (none when it reported none), and cost. */
function endCallSpan(span: Span, row: UsageRecordInput): void {
  if (!span.traceparent) return;
  const t = row.tokens;
  span.set({
    'svc.call.status': row.status,
    'svc.usage.unknown': t === null,
    'gen_ai.usage.input_tokens': t?.input,
    'gen_ai.usage.output_tokens': t?.output,
    'gen_ai.usage.cache_read.input_tokens': t?.cachedInput,
    'gen_ai.usage.cache_creation.input_tokens': t?.cacheWrite,
    'svc.usage.reasoning_tokens': t?.reasoning,
    'svc.cost_usd': row.cost_usd,
  });
  if (row.status !== 'ok') span.fail(row.status);
  span.end();
}

function hasLimits(b: Config['budgets']): boolean {
  return Boolean(b.daily || b.monthly || b.session || b.cron_task || b.channel);
}

/**
 * The most a call may use, known before it is made: its input as characters / 4 (an estimate
 * on the high side for English and code, not a tokenizer's count) plus the output cap it is sent
 * with. A request without a cap is counted at DEFAULT_MAX_TOKENS (the Anthropic adapter's
 * default; an OpenAI-protocol server without max_tokens may write more than that).
 */
export function estimateCall(entry: ModelEntry, req: ChatRequest): CallEstimate {
  let chars = 0;
  for (const m of req.messages) chars += JSON.stringify(m.content).length;
  if (req.tools) chars += JSON.stringify(req.tools).length;
  const input = Math.ceil(chars / 4);
  const protocol = resolveModel(entry).protocol;
  const output =
    protocol === 'anthropic'
      ? (thinkingFields(req.reasoningEffort, req.maxTokens).max_tokens as number)
      : (req.maxTokens ?? DEFAULT_MAX_TOKENS);
  const prices = pricesOf(entry);
  return {
    tokens: input + output,
    usd: prices ? costOf({ input, cachedInput: 0, cacheWrite: 0, output }, prices.prices) : null,
  };
}
