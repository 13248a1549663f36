import type { Dispatcher } from 'undici';
import { anthropicAdapter } from './anthropic.js';
import { errorFromException, type RequestContext } from './classify.js';
import { ProviderError } from './errors.js';
import { bodyChunks, post, readJson, type HttpOptions } from './http.js';
import { dialectOf, openaiAdapter } from './openai.js';
import {
  defaultRetryPolicy,
  retryCall,
  retryStream,
  type RetryNotice,
  type RetryPolicy,
} from './retry.js';
import { readSse } from './sse.js';
import type { ChatRequest, Completion, StreamEvent } from './types.js';
import type { WireAdapter } from './wire.js';

/** How to reach one provider: what a model entry resolves to. */
export interface ProviderEndpoint {
  protocol: 'openai' | 'anthropic';
  baseUrl: string;
  /** Sent only in the Authorization (openai) or x-api-key (anthropic) header. */
  apiKey?: string;
  /** Added to every request, after (so over) the built-in headers. */
  extraHeaders?: Record<string, string>;
  /** The catalog id (openai, deepseek, qwen, ...): picks the OpenAI-protocol dialect. */
  providerId?: string;
}

export interface ProviderOptions {
  /** No bytes for this long ends a stream with kind 'stall'. Default 60 s. */
  stallTimeoutMs?: number;
  /** How long a non-streamed reply may take to begin. Default 10 min. */
  requestTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Told before each retry, e.g. to show "retrying in 2 s". */
  onRetry?: (notice: RetryNotice) => void;
  dispatcher?: Dispatcher;
}

export interface Provider {
  /** The reply as it is written. Ends with a `done` event, or throws a ProviderError. */
  stream(req: ChatRequest): AsyncIterable<StreamEvent>;
  /** The whole reply in one non-streamed request. Throws a ProviderError. */
  complete(req: ChatRequest): Promise<Completion>;
}

export const DEFAULT_STALL_MS = 60_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;

/** Throws a ProviderError (kind 'bad_request') when the base URL cannot be used. */
export function createProvider(entry: ProviderEndpoint, opts: ProviderOptions = {}): Provider {
  const adapter: WireAdapter =
    entry.protocol === 'anthropic' ? anthropicAdapter : openaiAdapter(dialectOf(entry.providerId));
  let url: URL;
  try {
    url = adapter.url(entry.baseUrl);
  } catch (err) {
    throw new ProviderError('bad_request', err instanceof Error ? err.message : String(err));
  }
  const http: HttpOptions = {
    stallMs: opts.stallTimeoutMs ?? DEFAULT_STALL_MS,
    requestTimeoutMs: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    dispatcher: opts.dispatcher,
  };
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...opts.retry };
  const apiKey = entry.apiKey || undefined;
  const extra = Object.fromEntries(
    Object.entries(entry.extraHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
  );
  const headers = (stream: boolean) => ({ ...adapter.headers(apiKey, stream), ...extra });
  const contextOf = (req: ChatRequest): RequestContext => ({
    url,
    model: req.model,
    apiKey,
    stallMs: http.stallMs,
    signal: req.signal,
  });

  return {
    async *stream(req) {
      const ctx = contextOf(req);
      const h = headers(true);
      const body = adapter.body(req, true);
      const attempt = async function* (): AsyncGenerator<StreamEvent> {
        const res = await post(h, body, true, ctx, http);
        try {
          yield* adapter.parseStream(readSse(bodyChunks(res.body, ctx, http)), ctx);
        } catch (err) {
          throw errorFromException(err, ctx);
        } finally {
          // Also reached when the caller stops reading early: release the connection.
          res.body.destroy();
        }
      };
      try {
        yield* retryStream(attempt, policy, req.signal, opts.onRetry);
      } catch (err) {
        throw errorFromException(err, ctx);
      }
    },

    async complete(req) {
      const ctx = contextOf(req);
      const h = headers(false);
      const body = adapter.body(req, false);
      try {
        return await retryCall(
          async () => {
            const res = await post(h, body, false, ctx, http);
            return adapter.parseCompletion(await readJson(res, ctx, http), ctx);
          },
          policy,
          req.signal,
          opts.onRetry,
        );
      } catch (err) {
        throw errorFromException(err, ctx);
      }
    },
  };
}
