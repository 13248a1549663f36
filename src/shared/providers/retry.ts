import type { IncomingHttpHeaders } from 'node:http';
import { ProviderError, retryableKinds } from './errors.js';

/**
 * Retries for provider requests: 429, 5xx and network failures get another attempt after an
 * exponential, jittered wait, or after exactly what Retry-After asked for. A stream is retried
 * only until its first event reached the caller: after that a retry would repeat output.
 */

export interface RetryPolicy {
  /** Total attempts, the first included. */
  attempts: number;
  /** The wait before the second attempt; doubles for each one after. */
  baseDelayMs: number;
  /** No single wait is longer; a Retry-After asking for more ends the retries instead. */
  maxWaitMs: number;
  /** Injectable for tests; Math.random otherwise. */
  random?: () => number;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxWaitMs: 30_000 };

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  error: ProviderError;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After as seconds or an HTTP date (RFC 9110), or OpenAI's `retry-after-ms`; in ms. */
export function parseRetryAfter(
  headers: IncomingHttpHeaders,
  now = Date.now(),
): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const v = header(headers, 'retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** How long to wait before attempt `attempt + 1`, or null when there should be none. */
export function retryDelayMs(
  err: ProviderError,
  attempt: number,
  policy: RetryPolicy,
): number | null {
  if (!retryableKinds.has(err.kind) || attempt >= policy.attempts) return null;
  if (err.retryAfterMs !== undefined)
    return err.retryAfterMs > policy.maxWaitMs ? null : err.retryAfterMs;
  const ceiling = Math.min(policy.maxWaitMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // Half fixed, half random: spreads clients out without ever retrying at once.
  return Math.round(ceiling / 2 + (policy.random ?? Math.random)() * (ceiling / 2));
}

/** Waits, unless the signal fires first (then throws kind 'cancelled'). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted)
      return reject(new ProviderError('cancelled', 'The request to the model was cancelled.'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ProviderError('cancelled', 'The request to the model was cancelled.'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs a request, retrying as the policy allows. */
export async function retryCall<T>(
  run: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
  onRetry?: (n: RetryNotice) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt);
    } catch (err) {
      const delay = err instanceof ProviderError ? retryDelayMs(err, attempt, policy) : null;
      if (delay === null || signal?.aborted) throw err;
      onRetry?.({ attempt, delayMs: delay, error: err as ProviderError });
      await sleep(delay, signal);
    }
  }
}

/** Streams, retrying a failed attempt only while it has yielded nothing. */
export async function* retryStream<T>(
  run: (attempt: number) => AsyncIterable<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
  onRetry?: (n: RetryNotice) => void,
): AsyncGenerator<T> {
  for (let attempt = 1; ; attempt++) {
    let yielded = false;
    try {
      for await (const item of run(attempt)) {
        yielded = true;
        yield item;
      }
      return;
    } catch (err) {
      const delay =
        !yielded && err instanceof ProviderError ? retryDelayMs(err, attempt, policy) : null;
      if (delay === null || signal?.aborted) throw err;
      onRetry?.({ attempt, delayMs: delay, error: err as ProviderError });
      await sleep(delay, signal);
    }
  }
}
