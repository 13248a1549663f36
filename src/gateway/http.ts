import { ApiError } from '../shared/errors.js';
import type { EngineResponse } from './engine/types.js';

export type { RequestInfo } from './engine/types.js';

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  302: 'Found',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const statusLine = (status: number): string => STATUS_LINES[status] ?? String(status);
const STATUS_LINES: Record<number, string> = Object.fromEntries(
  Object.entries(statusText).map(([k, v]) => [k, `${k} ${v}`]),
);

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Close the connection after this response (unread request body, handover). */
  close?: boolean;
}

/**
 * A response that may be written later: tracks abortion, corks the write, and adds headers every
 * response carries (CORS for allowed origins, `Connection: close` while handing over).
 */
export class Responder {
  aborted = false;
  done = false;
  /** Headers every answer to this request carries (CORS); created only when there are some. */
  extraHeaders: Record<string, string> | undefined;

  private settled = false;
  private readonly abortListeners: Array<() => void> = [];

  constructor(
    readonly res: EngineResponse,
    /** Told once when the response is written or the client went away; `handingOver` closes connections. */
    private readonly owner: { readonly handingOver: boolean; settled(): void } = {
      handingOver: false,
      settled: () => {},
    },
    /** A HEAD request: the same status and headers as GET, no body. */
    private readonly head = false,
  ) {}

  private watching = false;

  /**
   * uWS needs an abort handler before a response goes asynchronous (and charges for one on every
   * request otherwise), so it is attached only then: call this before leaving the engine's callback.
   */
  watchAbort(): void {
    if (this.watching) return;
    this.watching = true;
    this.res.onAborted(() => {
      this.aborted = true;
      this.settle();
      for (const l of this.abortListeners) l();
    });
  }

  /** Runs when the client goes away before the response is complete. */
  onAbort(listener: () => void): void {
    this.watchAbort();
    this.abortListeners.push(listener);
  }

  /**
   * Starts a streamed response (SSE): status and headers now, then `write` chunks, then `end`.
   * Marks the response done for the pipeline, which will not write anything itself.
   */
  begin(status: number, headers: Record<string, string>): boolean {
    if (this.aborted || this.done) return false;
    this.done = true;
    this.settle();
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      for (const [k, v] of Object.entries({ ...this.extraHeaders, ...headers }))
        this.res.writeHeader(k, v);
    });
    return true;
  }

  write(chunk: string): void {
    if (this.aborted) return;
    this.res.cork(() => this.res.write(chunk));
  }

  end(): void {
    if (this.aborted) return;
    this.aborted = true; // nothing may be written after this
    this.res.cork(() => this.res.finish());
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.owner.settled();
  }

  /** True while the engine's request callback runs: uWS has corked the socket already, so no cork closure is needed. */
  inCallback = true;

  send(reply: Reply): void {
    if (this.aborted || this.done) return;
    this.done = true;
    this.settle();
    if (this.inCallback) this.writeAnswer(reply);
    else this.res.cork(() => this.writeAnswer(reply));
  }

  /** Writes the whole answer; runs for every request, so it builds no merged header object. */
  private writeAnswer(reply: Reply): void {
    const res = this.res;
    const status = reply.status ?? 200;
    const raw = reply.body;
    const isBuffer = raw instanceof Uint8Array;
    const body =
      raw === undefined
        ? ''
        : typeof raw === 'string' || isBuffer
          ? (raw as string | Uint8Array)
          : JSON.stringify(raw);
    const extra = this.extraHeaders;
    const own = reply.headers;
    const close = reply.close === true || this.owner.handingOver;
    res.writeStatus(statusLine(status));
    if (extra !== undefined) for (const k in extra) res.writeHeader(k, extra[k]!);
    if (own !== undefined) for (const k in own) res.writeHeader(k, own[k]!);
    if (raw !== undefined && !(own !== undefined && hasHeader(own, 'Content-Type'))) {
      res.writeHeader(
        'Content-Type',
        typeof raw === 'string'
          ? 'text/plain; charset=utf-8'
          : isBuffer
            ? 'application/octet-stream'
            : 'application/json',
      );
    }
    if (!(own !== undefined && hasHeader(own, 'X-Content-Type-Options')))
      res.writeHeader('X-Content-Type-Options', 'nosniff');
    if (status === 204 || status === 304) res.endWithoutBody(undefined, close);
    else if (this.head) res.endWithoutBody(Buffer.byteLength(body), close);
    else res.end(body, close);
  }

  error(err: ApiError, close = false): void {
    this.send({ status: err.status, body: err.toBody(), headers: err.headers, close });
  }
}

/** Headers are written in canonical case by our code; the lower-case spelling is accepted too. */
function hasHeader(
  headers: Record<string, string>,
  canonical: 'Content-Type' | 'X-Content-Type-Options',
): boolean {
  return (
    headers[canonical] !== undefined ||
    headers[canonical === 'Content-Type' ? 'content-type' : 'x-content-type-options'] !== undefined
  );
}

/**
 * How much of a refused body is still read (and dropped) before answering: closing a socket with
 * unread bytes makes the kernel send a reset, and a client still writing then sees a broken
 * connection instead of the 4xx. Past these bounds the connection is closed anyway.
 */
export const DRAIN_BYTES = 1024 * 1024;
export const DRAIN_MS = 2000;

/** Collects a request body up to `limit` bytes; must be called before the handler returns. */
export function readBody(res: EngineResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const refuse = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(tooLarge(limit));
    };
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (over || size > limit) {
        if (!over) {
          over = true;
          chunks.length = 0;
          timer = setTimeout(refuse, DRAIN_MS);
        }
        if (isLast || size > limit + DRAIN_BYTES) refuse();
        return;
      }
      chunks.push(Buffer.from(chunk)); // a copy: the engine may reuse the chunk
      if (isLast) {
        done = true;
        resolve(Buffer.concat(chunks, size));
      }
    });
  });
}

export function tooLarge(limit: number): ApiError {
  return new ApiError(
    'too_large',
    `The request body is larger than the limit of ${limit} bytes (limits.json_body_bytes in config.yml).`,
  );
}
