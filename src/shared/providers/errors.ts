/**
 * One error type for everything that can go wrong talking to a model provider. `kind` is what
 * the caller branches on (retry, tell the user to fix the key, ...); `message` is a sentence a
 * person can act on. No message ever carries the API key: every text that came from the network
 * or from a lower layer goes through `redact` first.
 */

export type ProviderErrorKind =
  | 'auth'
  | 'model_not_found'
  | 'bad_request'
  | 'rate_limited'
  | 'overloaded'
  | 'server'
  | 'network'
  | 'unreachable'
  | 'stall'
  | 'cancelled'
  | 'protocol';

export interface ProviderErrorOptions {
  /** The HTTP status, when the provider answered with one. */
  status?: number;
  /** How long the provider asked us to wait (Retry-After), in ms. */
  retryAfterMs?: number;
  /** The provider's own error type, e.g. "overloaded_error" or "invalid_api_key". */
  providerType?: string;
  cause?: unknown;
}

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly providerType: string | undefined;

  constructor(kind: ProviderErrorKind, message: string, opts: ProviderErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.providerType = opts.providerType;
  }

  /** A copy whose message (and cause) cannot leak `secret`. */
  redacted(secret: string | undefined): ProviderError {
    if (!secret || !this.message.includes(secret)) return this;
    return new ProviderError(this.kind, redact(this.message, secret), {
      status: this.status,
      retryAfterMs: this.retryAfterMs,
      providerType: this.providerType,
    });
  }
}

/** Kinds worth another attempt: the provider or the path to it may recover on its own. */
export const retryableKinds: ReadonlySet<ProviderErrorKind> = new Set([
  'rate_limited',
  'overloaded',
  'server',
  'network',
  'unreachable',
]);

/** Replaces every occurrence of `secret` (and of its Bearer form) with a marker. */
export function redact(text: string, secret: string | undefined): string {
  // A key shorter than 4 characters would blank out ordinary words; such a key is not a secret.
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('[redacted]');
}

/** Shortens a provider-supplied text for inclusion in a message. */
export function snippet(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** "300 ms", "60 s": for messages about waits. */
export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`;
}
