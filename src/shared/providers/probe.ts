import type { Dispatcher } from 'undici';
import { formatDuration, ProviderError, type ProviderErrorKind } from './errors.js';
import { createProvider, type Provider, type ProviderEndpoint } from './provider.js';

/**
 * POST /api/config/test: one real, minimal request (one short user message, at most 8 output
 * tokens, no reasoning, no retries) that tells whether base URL, key and model work, and if not,
 * which of them to fix.
 */

export type ProbeReason =
  | 'bad_key'
  | 'unknown_model'
  | 'unreachable'
  | 'rate_limited'
  | 'server_error'
  | 'bad_response';

export type ProbeResult =
  | { ok: true; latency_ms: number }
  | { ok: false; reason: ProbeReason; message: string };

const reasons: Record<ProviderErrorKind, ProbeReason> = {
  auth: 'bad_key',
  model_not_found: 'unknown_model',
  unreachable: 'unreachable',
  network: 'unreachable',
  stall: 'unreachable',
  cancelled: 'unreachable',
  rate_limited: 'rate_limited',
  overloaded: 'server_error',
  server: 'server_error',
  bad_request: 'bad_response',
  protocol: 'bad_response',
};

export interface ProbeOptions {
  /** The whole probe gives up after this long (reason 'unreachable'). Default 30 s. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

export async function probeModel(
  entry: ProviderEndpoint,
  model: string,
  opts: ProbeOptions = {},
): Promise<ProbeResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const started = performance.now();
  let provider: Provider;
  try {
    // The deadline below ends the probe; these only must not fire first.
    const waits = timeoutMs + 1000;
    provider = createProvider(entry, {
      retry: { attempts: 1 },
      stallTimeoutMs: waits,
      requestTimeoutMs: waits,
      dispatcher: opts.dispatcher,
    });
  } catch (err) {
    // A base URL that cannot even be parsed is one nobody can reach.
    return {
      ok: false,
      reason: 'unreachable',
      message: err instanceof Error ? err.message : String(err),
    };
  }
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  try {
    await provider.complete({
      model,
      messages: [{ role: 'user', content: 'Reply with OK.' }],
      maxTokens: 8,
      signal,
    });
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'cancelled' && deadline.aborted)
      return {
        ok: false,
        reason: 'unreachable',
        message: `${new URL(entry.baseUrl).host} did not answer within ${formatDuration(timeoutMs)}.`,
      };
    return { ok: false, reason: reasons[err.kind], message: err.message };
  }
}
