import { firstIssue } from '../errors.js';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import {
  formatDuration,
  ProviderError,
  type ProviderErrorKind,
  redact,
  snippet,
} from './errors.js';
import { parseRetryAfter } from './retry.js';

/** What an error message may name: where we were talking to, and about which model. */
export interface RequestContext {
  url: URL;
  model: string;
  apiKey?: string;
  stallMs?: number;
  signal?: AbortSignal;
}

/**
 * The error bodies providers send, loosely: OpenAI and compatibles `{error:{message,type,code}}`,
 * Anthropic `{type:"error",error:{type,message}}`, some servers `{error:"..."}`, `{message}` or
 * FastAPI's `{detail}`.
 */
const errorBodySchema = z.looseObject({
  error: z
    .union([
      z.looseObject({
        message: z.string().nullish(),
        type: z.string().nullish(),
        code: z.union([z.string(), z.number()]).nullish(),
      }),
      z.string(),
    ])
    .optional(),
  message: z.string().optional(),
  detail: z.string().optional(),
});

export interface ProviderFault {
  message: string | undefined;
  type: string | undefined;
}

/** Reads a provider error body; undefined when it is not one of the known shapes. */
export function parseErrorBody(text: string): ProviderFault | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = errorBodySchema.safeParse(json);
  if (!parsed.success) return undefined;
  const { error, message, detail } = parsed.data;
  if (typeof error === 'string') return { message: error, type: undefined };
  if (error) {
    const code = error.code == null ? undefined : String(error.code);
    return { message: error.message ?? undefined, type: code ?? error.type ?? undefined };
  }
  if (message !== undefined || detail !== undefined)
    return { message: message ?? detail, type: undefined };
  return undefined;
}

const notFoundWords =
  /not[ _-]?(exist|found|supported|available)|does ?n[o']?t exist|unknown|invalid|no such|not a valid/i;

/** Servers differ in how they say "no such model" (404, or 400 with a sentence); this reads both. */
function saysModelNotFound(fault: ProviderFault | undefined, model: string): boolean {
  if (!fault) return false;
  if (fault.type === 'model_not_found') return true;
  const msg = fault.message ?? '';
  if (fault.type === 'not_found_error' && /model/i.test(msg)) return true;
  return (/model/i.test(msg) || msg.includes(model)) && notFoundWords.test(msg);
}

function quote(fault: ProviderFault | undefined, apiKey: string | undefined): string {
  const text = fault?.message ? snippet(redact(fault.message, apiKey)) : '';
  return text ? `: ${text}` : '';
}

/** Turns a non-2xx answer into a ProviderError with a message that says what to do. */
export function errorFromResponse(
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
  ctx: RequestContext,
): ProviderError {
  const fault = parseErrorBody(bodyText);
  const host = ctx.url.host;
  const said = quote(fault, ctx.apiKey);
  const base = { status, providerType: fault?.type, retryAfterMs: parseRetryAfter(headers) };
  const make = (kind: ProviderErrorKind, message: string) =>
    new ProviderError(kind, redact(message, ctx.apiKey), base);

  if (status === 401)
    return make(
      'auth',
      `${host} refused the API key (HTTP 401${said}). Check the key of this model entry.`,
    );
  if (status === 403)
    return make(
      'auth',
      `${host} denied access (HTTP 403${said}). The key may lack permission for this model, or the account for this region.`,
    );
  if (
    status === 404 ||
    (status === 400 && saysModelNotFound(fault, ctx.model)) ||
    (status === 422 && saysModelNotFound(fault, ctx.model))
  ) {
    if (saysModelNotFound(fault, ctx.model))
      return make(
        'model_not_found',
        `${host} does not serve the model "${ctx.model}" (HTTP ${status}${said}). Check the model name.`,
      );
    return make(
      'bad_request',
      `Nothing answers at ${ctx.url.origin}${ctx.url.pathname} (HTTP 404${said}). Check the base URL and the protocol of this model entry.`,
    );
  }
  if (status === 429)
    return make(
      'rate_limited',
      `${host} is rate-limiting requests (HTTP 429${said}). Wait a moment, or check the account's limits and balance.`,
    );
  if (status === 529 || status === 503)
    return make('overloaded', `${host} is overloaded (HTTP ${status}${said}). Try again shortly.`);
  if (status === 408)
    return make('network', `${host} timed out waiting for the request (HTTP 408${said}).`);
  if (status === 413)
    return make(
      'bad_request',
      `${host} says the request is too large (HTTP 413${said}). Shorten the conversation or attachments.`,
    );
  if (status >= 500)
    return make(
      'server',
      `${host} had an internal error (HTTP ${status}${said}). Try again later.`,
    );
  return make('bad_request', `${host} rejected the request (HTTP ${status}${said}).`);
}

/** Provider error types sent inside a stream, mapped to kinds. */
export function kindOfProviderType(type: string | undefined): ProviderErrorKind {
  switch (type) {
    case 'overloaded_error':
      return 'overloaded';
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
      return 'rate_limited';
    case 'authentication_error':
    case 'permission_error':
    case 'invalid_api_key':
      return 'auth';
    case 'not_found_error':
    case 'model_not_found':
      return 'model_not_found';
    case 'invalid_request_error':
    case 'request_too_large':
      return 'bad_request';
    default:
      return 'server';
  }
}

/** An error the provider reported in the middle of a stream (an `error` event or object). */
export function errorFromStream(fault: ProviderFault, ctx: RequestContext): ProviderError {
  const kind = kindOfProviderType(fault.type);
  const what = fault.message ? snippet(redact(fault.message, ctx.apiKey)) : 'no details';
  const type = fault.type ? ` (${fault.type})` : '';
  return new ProviderError(
    kind,
    redact(`${ctx.url.host} reported an error while answering${type}: ${what}`, ctx.apiKey),
    {
      providerType: fault.type,
    },
  );
}

const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const stallCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function codeOf(err: unknown): string | undefined {
  if (err instanceof AggregateError)
    return codeOf(err.errors[0]) ?? codeOf((err as { code?: unknown }).code);
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string')
    return err.code;
  return undefined;
}

/** Turns whatever undici or node threw into a ProviderError. */
export function errorFromException(err: unknown, ctx: RequestContext): ProviderError {
  // Whatever broke after the caller cancelled is a consequence of cancelling.
  if (ctx.signal?.aborted)
    return err instanceof ProviderError && err.kind === 'cancelled'
      ? err
      : new ProviderError('cancelled', 'The request to the model was cancelled.');
  if (err instanceof ProviderError) return err.redacted(ctx.apiKey);
  const code = codeOf(err) ?? codeOf(err instanceof Error ? err.cause : undefined);
  const host = ctx.url.host;
  const detail = redact(err instanceof Error ? err.message : String(err), ctx.apiKey);
  if (code && stallCodes.has(code))
    return new ProviderError(
      'stall',
      `${host} sent nothing for ${formatDuration(ctx.stallMs ?? 0)}; the request was abandoned.`,
      { cause: err },
    );
  if (code && unreachableCodes.has(code))
    return new ProviderError(
      'unreachable',
      `Could not connect to ${host} (${code}). Is the server running, and is the base URL right?`,
      { cause: err },
    );
  if (code && /CERT|TLS|SSL/.test(code))
    return new ProviderError(
      'unreachable',
      `The TLS connection to ${host} failed (${code}). Check the base URL and the server's certificate.`,
      { cause: err },
    );
  return new ProviderError(
    'network',
    `The connection to ${host} failed (${code ?? snippet(detail, 120)}). Try again.`,
    { cause: err },
  );
}

/** The provider sent something this client cannot read. */
export function protocolError(
  ctx: RequestContext,
  what: string,
  issues?: z.ZodError,
): ProviderError {
  const where = issues?.issues[0] ? ` (${firstIssue(issues, 'top level')})` : '';
  return new ProviderError(
    'protocol',
    `${ctx.url.host} sent ${what}${where}. Check that the base URL and protocol of this model entry are right.`,
  );
}

/** Parses one JSON event payload, or fails with a protocol error. */
export function parseEventJson(data: string, ctx: RequestContext): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw protocolError(
      ctx,
      `a stream event that is not JSON: ${JSON.stringify(data.slice(0, 80))}`,
    );
  }
}
