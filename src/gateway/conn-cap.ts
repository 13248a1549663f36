import { ApiError } from '../shared/errors.js';
import { log } from '../shared/log.js';

/** Seconds a refused client is told to wait before trying again. */
const RETRY_AFTER_S = 5;
/** The "cap reached" log line at most this often: a storm must not flood the log. */
const LOG_EVERY_MS = 60_000;

/**
 * The gateway's connection caps (see connectionCaps in shared/fd-limit.ts): a client beyond
 * them gets a 503 with Retry-After and its connection closed, so the process never runs out of
 * descriptors (where accept fails and, on uWS, is retried in a busy loop) and a slot is always
 * left for a plain request such as /api/health.
 */
export class ConnectionCap {
  private lastLog = 0;
  refused = 0;

  constructor(readonly caps: { total: number; ws: number } | undefined) {}

  /** A 503 for a request when `open` connections (requests in flight + WebSockets, this one included) exceed the total. */
  request(open: number): ApiError | undefined {
    if (!this.caps || open <= this.caps.total) return undefined;
    return this.refuse('connections', this.caps.total);
  }

  /** A 503 for a WebSocket upgrade when `open` WebSockets already fill their share. */
  upgrade(open: number): ApiError | undefined {
    if (!this.caps || open < this.caps.ws) return undefined;
    return this.refuse('WebSockets', this.caps.ws);
  }

  private refuse(what: string, cap: number): ApiError {
    this.refused++;
    const now = Date.now();
    if (now - this.lastLog >= LOG_EVERY_MS) {
      this.lastLog = now;
      log.warn(
        `the gateway holds ${cap} ${what}, its cap below the descriptor limit; refusing more with 503 until some close`,
        { cap, refused: this.refused },
      );
    }
    return new ApiError(
      'unavailable',
      `svc has as many open ${what} as it can hold (${cap}); try again in ${RETRY_AFTER_S} s.`,
      undefined,
      { 'Retry-After': String(RETRY_AFTER_S) },
    );
  }
}
