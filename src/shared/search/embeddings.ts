import { z } from 'zod';
import type { Config, ModelEntry } from '../config/schema.js';
import { costOf, pricesOf } from '../providers/prices.js';
import { resolveModel } from '../providers/resolve.js';
import type { Db } from '../store/db.js';
import { insertUsage, type UsageRecordInput } from '../store/usage.js';
import { checkCall, limitStates, type BudgetRefusal } from '../usage/budgets.js';
import { own } from '../own.js';

/**
 * Calls to the embeddings model (slots.embeddings): an OpenAI-compatible POST {base}/embeddings.
 * Each call is checked against the overall budgets (daily, monthly) before it is made, as every
 * model call is, and recorded in usage (origin `embedding`) with the tokens the server reported.
 */

export interface EmbeddingsModel {
  id: string;
  entry: ModelEntry;
  /** Which vectors this model makes: the same key keeps them, another starts over. */
  key: string;
}

/** The configured embeddings model, or null: then nothing is loaded and nothing is sent. */
export function embeddingsModel(config: Config): EmbeddingsModel | null {
  const id = config.slots.embeddings;
  if (id === undefined) return null;
  const entry = own(config.models, id);
  if (!entry) return null;
  const base = resolveModel(entry).base_url ?? '';
  return { id, entry, key: `${entry.provider}|${entry.model}|${base}` };
}

const answerSchema = z.object({
  data: z
    .array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()).min(1) }))
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().min(0) })
    .partial()
    .optional(),
});

/** A call not made: it could cross a budget. */
export class EmbeddingBudgetExceeded extends Error {
  constructor(readonly refusal: BudgetRefusal) {
    super(refusal.message);
  }
}

function url(base: string): string {
  return `${base.replace(/\/+$/, '')}/embeddings`;
}

/**
 * Embeds `texts` (one vector each, in order). `record` writes the call's usage row; the fill passes
 * its own so the row commits with the vectors. Throws EmbeddingBudgetExceeded before the call
 * when it could cross a limit, and an Error a person can read when the server fails.
 */
export async function embedTexts(
  db: Db,
  config: Config,
  model: EmbeddingsModel,
  texts: string[],
  opts: { timeoutMs: number; record?: (r: UsageRecordInput) => void },
): Promise<Float32Array[]> {
  const r = resolveModel(model.entry);
  if (!r.base_url) throw new Error(`the embeddings model "${model.id}" has no base_url`);
  const chars = texts.reduce((n, t) => n + t.length, 0);
  const estimate = Math.ceil(chars / 4);
  const prices = pricesOf(model.entry);
  const usdOf = (input: number) =>
    prices ? costOf({ input, cachedInput: 0, cacheWrite: 0, output: 0 }, prices.prices) : null;
  const budgets = config.budgets;
  if (budgets.daily || budgets.monthly) {
    const states = limitStates(db, budgets, { sessionId: null, cronTask: null, channel: null });
    const refusal = checkCall(states, { tokens: estimate, usd: usdOf(estimate) });
    if (refusal) throw new EmbeddingBudgetExceeded(refusal);
  }
  const started = performance.now();
  let status: UsageRecordInput['status'] = 'error';
  let tokens: number | null = null;
  try {
    const res = await fetch(url(r.base_url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(r.api_key ? { authorization: `Bearer ${r.api_key}` } : {}),
      },
      body: JSON.stringify({ model: model.entry.model, input: texts }),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    if (!res.ok)
      throw new Error(`the embeddings endpoint answered ${res.status} ${res.statusText}`.trim());
    const parsed = answerSchema.safeParse(await res.json());
    if (!parsed.success || parsed.data.data.length !== texts.length)
      throw new Error('the embeddings endpoint answered something other than one vector per text');
    tokens = parsed.data.usage?.prompt_tokens ?? null;
    const out = new Array<Float32Array | undefined>(texts.length).fill(undefined);
    for (const d of parsed.data.data) out[d.index] = Float32Array.from(d.embedding);
    if (out.some((v) => v === undefined))
      throw new Error('the embeddings endpoint left out some of the texts');
    status = 'ok';
    return out as Float32Array[];
  } finally {
    const row: UsageRecordInput = {
      at: new Date().toISOString(),
      session_id: null,
      turn_id: null,
      model_id: model.id,
      provider: model.entry.provider,
      model: model.entry.model,
      origin: 'embedding',
      channel: null,
      cron_task: null,
      workflow_run: null,
      status,
      streamed: false,
      tokens:
        tokens === null
          ? null
          : { input: tokens, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: null },
      estimated_tokens: estimate,
      cost_usd: tokens === null ? null : usdOf(tokens),
      latency_ms: performance.now() - started,
    };
    // A failed call is recorded at once; a good one by the caller's own transaction, if it asks.
    if (status === 'ok' && opts.record) opts.record(row);
    else db.transaction(() => insertUsage(db, row)).immediate();
  }
}
