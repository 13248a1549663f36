import type { ModelEntry } from '../config/schema.js';

/**
 * Prices of well-known models, in US dollars per million tokens, as the vendors' pricing pages
 * listed them on PRICES_TAKEN. A model entry's own `prices` win; a model not listed here has no
 * price until its entry gets one (svc never guesses a price from a similar name).
 * `cache_write` is what writing the prompt cache costs (Anthropic); absent, it costs `input`.
 */
export const PRICES_TAKEN = '2025-10-01';

export interface Prices {
  input: number;
  cached_input?: number;
  cache_write?: number;
  output: number;
}

const p = (input: number, cached: number, output: number, cacheWrite?: number): Prices => ({
  input,
  cached_input: cached,
  output,
  ...(cacheWrite === undefined ? {} : { cache_write: cacheWrite }),
});

/** provider id → model name → prices. */
const builtin: Record<string, Record<string, Prices>> = {
  openai: {
    'gpt-5': p(1.25, 0.125, 10),
    'gpt-5-mini': p(0.25, 0.025, 2),
    'gpt-5-nano': p(0.05, 0.005, 0.4),
    'gpt-4.1': p(2, 0.5, 8),
    'gpt-4.1-mini': p(0.4, 0.1, 1.6),
    'gpt-4.1-nano': p(0.1, 0.025, 0.4),
    'gpt-4o': p(2.5, 1.25, 10),
    'gpt-4o-mini': p(0.15, 0.075, 0.6),
  },
  anthropic: {
    'claude-sonnet-4-5': p(3, 0.3, 15, 3.75),
    'claude-sonnet-4-0': p(3, 0.3, 15, 3.75),
    'claude-opus-4-1': p(15, 1.5, 75, 18.75),
    'claude-haiku-4-5': p(1, 0.1, 5, 1.25),
    'claude-3-5-haiku-latest': p(0.8, 0.08, 4, 1),
  },
  deepseek: {
    'deepseek-chat': p(0.28, 0.028, 0.42),
    'deepseek-reasoner': p(0.28, 0.028, 0.42),
  },
  gemini: {
    'gemini-2.5-pro': p(1.25, 0.31, 10),
    'gemini-2.5-flash': p(0.3, 0.075, 2.5),
    'gemini-2.5-flash-lite': p(0.1, 0.025, 0.4),
  },
};

export interface EffectivePrices {
  prices: Prices;
  source: 'config' | 'builtin';
  /** When the built-in price was taken; null for a price from config. */
  taken: string | null;
}

/** svc's shipped prices of one provider's models (model name → prices); empty when it has none. */
export function builtinPrices(provider: string): Record<string, Prices> {
  return Object.hasOwn(builtin, provider) ? { ...builtin[provider] } : {};
}

/** The prices a model entry is charged at, or null when none is known. */
export function pricesOf(
  entry: Pick<ModelEntry, 'provider' | 'model' | 'prices'>,
): EffectivePrices | null {
  if (entry.prices) return { prices: entry.prices, source: 'config', taken: null };
  const known = builtin[entry.provider]?.[entry.model];
  return known ? { prices: known, source: 'builtin', taken: PRICES_TAKEN } : null;
}

/** Tokens in disjoint buckets, as a usage record keeps them. */
export interface TokenCounts {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/** The cost in US dollars of the given tokens at these prices. */
export function costOf(t: TokenCounts, prices: Prices): number {
  const perM =
    t.input * prices.input +
    t.cachedInput * (prices.cached_input ?? prices.input) +
    t.cacheWrite * (prices.cache_write ?? prices.input) +
    t.output * prices.output;
  return perM / 1_000_000;
}
