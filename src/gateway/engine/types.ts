import type { ApiError } from '../../shared/errors.js';

export type EngineName = 'uws' | 'node';

/** Everything the gateway reads from a request; valid after the engine's callback returns. */
export interface RequestInfo {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Bytes of the request target (path, `?` and query) as it came. */
  readonly urlLength: number;
  /** Lower-case names; a repeated header's values joined with ", " (both engines alike). */
  headers: Record<string, string>;
  /** The socket's peer address as text (for logs). */
  readonly peer: string;
  /** From the socket alone, never from a header. */
  readonly peerLoopback: boolean;
}

/**
 * One HTTP response as the gateway writes it. Status and headers first, then exactly one of:
 * a whole body (`end`), no body (`endWithoutBody`), a stream of unknown length (`write` …
 * `finish`) or of known length (`writeSized`). Writes outside the engine's request callback go
 * inside `cork` (uWS batches them into one syscall; Node needs nothing).
 */
export interface EngineResponse {
  cork(fn: () => void): void;
  /** "200 OK" */
  writeStatus(line: string): void;
  writeHeader(name: string, value: string): void;
  end(body: string | Uint8Array, close: boolean): void;
  /** `length` is sent as Content-Length (a HEAD answer); undefined sends none (204, 304). */
  endWithoutBody(length: number | undefined, close: boolean): void;
  /** A chunk of a body of unknown length (chunked). */
  write(chunk: string | Uint8Array): void;
  finish(): void;
  /**
   * A chunk of a body of `total` bytes (Content-Length). False when the engine is holding part
   * of it: write nothing more until `onDrain` runs. The response ends with its last byte.
   */
  writeSized(chunk: Uint8Array, total: number): boolean;
  /** Runs once when the chunk `writeSized` held back is out. */
  onDrain(fn: () => void): void;
  /** Drops the connection at once (a promised length that cannot be met). */
  destroy(): void;
  /** The client went away before the response was complete. Must be set before going asynchronous (uWS). */
  onAborted(fn: () => void): void;
  /** The request body, chunk by chunk; a chunk is valid only during the call (copy to keep). Call before the callback returns. */
  onData(fn: (chunk: Uint8Array, isLast: boolean) => void): void;
  pause(): void;
  resume(): void;
}

/** One /ws connection. */
export interface EngineSocket<T> {
  readonly data: T;
  send(text: string): void;
  /** Bytes queued and not yet taken by the kernel: a slow reader's measure. */
  bufferedAmount(): number;
  cork(fn: () => void): void;
  end(code: number, reason: string): void;
}

export type UpgradeDecision<T> = { ok: true; data: T } | { ok: false; error: ApiError };

export interface WsHandlers<T> {
  /** Frames larger than this close the connection. */
  maxPayload: number;
  upgrade(req: RequestInfo): UpgradeDecision<T>;
  open(ws: EngineSocket<T>): void;
  message(ws: EngineSocket<T>, text: Buffer, isBinary: boolean): void;
  close(ws: EngineSocket<T>): void;
}

/** The seam between the gateway and an HTTP server library. */
export interface HttpEngine {
  readonly name: EngineName;
  /** Every HTTP request that is not a WebSocket upgrade of `/ws`. */
  onRequest(fn: (res: EngineResponse, req: RequestInfo) => void): void;
  /** `/ws` upgrades (the only path that upgrades); set before `listen`. */
  ws<T>(handlers: WsHandlers<T>): void;
  /**
   * Binds (host '' = every interface) and answers the port, shareable with the next gateway
   * (SO_REUSEPORT); or accepts on `inherited`, the listening socket of the gateway before it.
   */
  listen(host: string, port: number, inherited?: unknown): Promise<number>;
  /** The listening socket to pass to the next gateway, where the port cannot be shared otherwise. */
  listenerToPass(): object | undefined;
  /**
   * At most `n` open connections (HTTP and WebSocket): beyond it a new one is closed at once.
   * Where the engine cannot see connections before their first request (uWS), the gateway's own
   * count (ConnectionCap) is the cap and this does nothing.
   */
  capConnections(n: number): void;
  /** Stops accepting new connections; open ones go on. */
  stopListening(): void;
}
