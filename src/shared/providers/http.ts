import { request, type Dispatcher } from 'undici';
import {
  errorFromException,
  errorFromResponse,
  errorFromStream,
  parseErrorBody,
  type RequestContext,
} from './classify.js';
import { formatDuration, ProviderError } from './errors.js';
import { watchStall } from './stall.js';

/** The one place that talks HTTP to a provider: a JSON POST, errors turned into ProviderErrors. */

export interface HttpOptions {
  /** No bytes for this long ends a streamed request (kind 'stall'). */
  stallMs: number;
  /** A non-streamed reply must begin within this long (the model writes it all before answering). */
  requestTimeoutMs: number;
  dispatcher?: Dispatcher;
}

type Body = Dispatcher.ResponseData['body'];

const ERROR_BODY_CAP = 64 * 1024;
const JSON_BODY_CAP = 64 * 1024 * 1024;

/** The body's chunks, with the stall watchdog on. */
export function bodyChunks(
  body: Body,
  ctx: RequestContext,
  opts: HttpOptions,
): AsyncGenerator<Buffer> {
  const stall = () =>
    new ProviderError(
      'stall',
      `${ctx.url.host} sent nothing for ${formatDuration(opts.stallMs)}; the reply was abandoned.`,
    );
  return watchStall<Buffer>(body, opts.stallMs, stall, () => body.destroy());
}

async function readText(
  body: Body,
  cap: number,
  ctx: RequestContext,
  opts: HttpOptions,
): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of bodyChunks(body, ctx, opts)) {
    size += chunk.length;
    if (size > cap) {
      body.destroy();
      throw new ProviderError(
        'protocol',
        `${ctx.url.host} sent a reply larger than ${Math.round(cap / 1024)} KiB.`,
      );
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * POSTs `payload`. Resolves with the open response when the status is 2xx; otherwise reads the
 * error body and throws the matching ProviderError.
 */
export async function post(
  headers: Record<string, string>,
  payload: unknown,
  stream: boolean,
  ctx: RequestContext,
  opts: HttpOptions,
): Promise<Dispatcher.ResponseData> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(ctx.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(payload),
      signal: ctx.signal,
      dispatcher: opts.dispatcher,
      headersTimeout: stream ? opts.stallMs : opts.requestTimeoutMs,
      // Streams are watched by watchStall (which only counts our waiting); plain replies by undici.
      bodyTimeout: stream ? 0 : opts.stallMs,
    });
  } catch (err) {
    throw errorFromException(err, ctx);
  }
  try {
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await readText(res.body, ERROR_BODY_CAP, ctx, opts).catch(() => '');
      throw errorFromResponse(res.statusCode, res.headers, text, ctx);
    }
    const type = String(res.headers['content-type'] ?? '');
    if (stream && /json/i.test(type)) {
      // Some servers answer a streaming request that failed with a plain JSON error and status 200.
      const text = await readText(res.body, ERROR_BODY_CAP, ctx, opts);
      const fault = parseErrorBody(text);
      if (fault) throw errorFromStream(fault, ctx);
      throw new ProviderError(
        'protocol',
        `${ctx.url.host} answered a streaming request with JSON instead of an event stream.`,
      );
    }
    return res;
  } catch (err) {
    res.body.destroy();
    throw errorFromException(err, ctx);
  }
}

/** Reads a whole JSON reply. */
export async function readJson(
  res: Dispatcher.ResponseData,
  ctx: RequestContext,
  opts: HttpOptions,
): Promise<unknown> {
  let text: string;
  try {
    text = await readText(res.body, JSON_BODY_CAP, ctx, opts);
  } catch (err) {
    throw errorFromException(err, ctx);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError(
      'protocol',
      `${ctx.url.host} sent a reply that is not JSON: ${JSON.stringify(text.slice(0, 80))}.`,
    );
  }
}
