import {
  createServer,
  ServerResponse,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isLoopbackText } from '../../shared/net/addr.js';
import { ApiError } from '../../shared/errors.js';
import { headOverflow, MAX_URL_BYTES } from '../url-limit.js';
import type { EngineResponse, EngineSocket, HttpEngine, RequestInfo, WsHandlers } from './types.js';

/** node:http's bound on a request head: room for a URL at the limit and ordinary headers. */
const MAX_HEAD_BYTES = MAX_URL_BYTES + 16_384;

/** Node's http server (since 22.12) can share its port with the next gateway, as uWS does. */
export const nodeReusePort = (() => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
})();

/**
 * Headers from the raw list, joined like uWS joins them: a repeated Host becomes "a, b" (no
 * local host) instead of Node's keep-the-first, so both engines judge the same request alike.
 */
class NodeRequest implements RequestInfo {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string> = {};
  private readonly rawQuery: string;
  private parsedQuery: URLSearchParams | undefined;
  readonly urlLength: number;

  constructor(private readonly req: IncomingMessage) {
    this.method = req.method ?? '';
    const url = req.url ?? '/';
    this.urlLength = url.length;
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.rawQuery = q < 0 ? '' : url.slice(q + 1);
    const raw = req.rawHeaders;
    const headers = this.headers;
    for (let i = 0; i < raw.length; i += 2) {
      const k = raw[i]!.toLowerCase();
      const v = raw[i + 1]!;
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    }
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  get peer(): string {
    return this.req.socket.remoteAddress ?? '';
  }

  get peerLoopback(): boolean {
    const addr = this.req.socket.remoteAddress;
    return addr !== undefined && isLoopbackText(addr);
  }
}

/**
 * Node's ServerResponse behind the same calls as uWS. Status and headers are collected and
 * written in one `writeHead` with a flat list (Node's fastest path), Content-Length included
 * whenever the length is known, so Node never falls back to chunked encoding for a whole body.
 */
class NodeResponse implements EngineResponse {
  private status = 200;
  private statusText = 'OK';
  private readonly list: string[] = [];
  private sent = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  cork(fn: () => void): void {
    fn();
  }
  writeStatus(line: string): void {
    const sp = line.indexOf(' ');
    this.status = Number(sp < 0 ? line : line.slice(0, sp));
    this.statusText = sp < 0 ? (STATUS_CODES[this.status] ?? '') : line.slice(sp + 1);
  }
  writeHeader(name: string, value: string): void {
    this.list.push(name, value);
  }
  private head(length: number | undefined, close: boolean): void {
    if (length !== undefined) this.list.push('Content-Length', String(length));
    if (close) this.list.push('Connection', 'close');
    this.res.writeHead(this.status, this.statusText, this.list);
  }
  end(body: string | Uint8Array, close: boolean): void {
    this.head(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength, close);
    this.res.end(body);
  }
  endWithoutBody(length: number | undefined, close: boolean): void {
    this.head(length, close);
    this.res.end();
  }
  write(chunk: string | Uint8Array): void {
    if (!this.res.headersSent) this.head(undefined, false);
    this.res.write(chunk);
  }
  finish(): void {
    if (!this.res.headersSent) this.head(undefined, false);
    this.res.end();
  }
  writeSized(chunk: Uint8Array, total: number): boolean {
    if (!this.res.headersSent) this.head(total, false);
    this.sent += chunk.byteLength;
    if (this.sent >= total) {
      this.res.end(chunk);
      return true;
    }
    return this.res.write(chunk);
  }
  onDrain(fn: () => void): void {
    this.res.once('drain', fn);
  }
  destroy(): void {
    this.res.destroy();
  }
  onAborted(fn: () => void): void {
    // 'close' after a complete response is no abort; before it, the client went away.
    this.res.once('close', () => {
      if (!this.res.writableFinished) fn();
    });
  }
  onData(fn: (chunk: Uint8Array, isLast: boolean) => void): void {
    this.req.on('data', (chunk: Buffer) => fn(chunk, false));
    this.req.once('end', () => fn(EMPTY, true));
  }
  pause(): void {
    this.req.pause();
  }
  resume(): void {
    this.req.resume();
  }
}

const EMPTY = new Uint8Array(0);

class NodeSocket<T> implements EngineSocket<T> {
  alive = true;
  constructor(
    readonly ws: WebSocket,
    readonly data: T,
  ) {}
  send(text: string): void {
    this.ws.send(text);
  }
  bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }
  cork(fn: () => void): void {
    fn();
  }
  end(code: number, reason: string): void {
    this.ws.close(code, reason);
  }
}

/** Sockets whose request was refused before it was read whole: the answer is on its way. */
const answered = new WeakSet<Duplex>();
/** How long a refused request's remaining bytes are read and dropped before the socket is closed. */
const LINGER_MS = 5_000;

/**
 * Reads and drops what the client is still sending, and closes once it stops (or after
 * LINGER_MS). Closing a socket with unread bytes sends a reset, and a reset can make the client
 * drop the answer it has not read yet (a 64 kB URL lost its 414 that way under load).
 */
function lingerClose(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.on('data', () => {});
  socket.resume();
}

/** uWS's default idle timeout for /ws: a client that answers no ping in this long is dropped. */
const WS_IDLE_MS = 120_000;

/** `node:http` with the `ws` library for /ws: the engine for runtimes uWS has no binary for. */
export class NodeEngine implements HttpEngine {
  readonly name = 'node' as const;
  private readonly server: Server;
  private handler: ((res: EngineResponse, req: RequestInfo) => void) | undefined;
  private wsUpgrade: ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) | undefined;
  private readonly sockets = new Set<NodeSocket<unknown>>();
  private pinger: NodeJS.Timeout | undefined;

  constructor() {
    // Node's request timeout (300 s) would cut a long upload off; headers still have to arrive in 60 s.
    // A head past maxHeaderSize never reaches the handler: clientError answers it (414 or 431).
    this.server = createServer(
      { requestTimeout: 0, keepAliveTimeout: 10_000, maxHeaderSize: MAX_HEAD_BYTES },
      (req, res) => this.handler?.(new NodeResponse(req, res), new NodeRequest(req)),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (req.url ?? '').split('?')[0];
      if (path === '/ws' && this.wsUpgrade) return this.wsUpgrade(req, socket, head);
      // Any other path answers as plain HTTP, as on uWS: only /ws upgrades.
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as never);
      res.on('finish', () => socket.end());
      this.handler?.(new NodeResponse(req, res), new NodeRequest(req));
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (answered.has(socket)) return; // the rest of a refused request: lingerClose drains it
      if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
      const e =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? headOverflow((err as { rawPacket?: Buffer }).rawPacket)
          : new ApiError('invalid_request', 'The request is not valid HTTP/1.1.');
      const body = JSON.stringify(e.toBody());
      answered.add(socket);
      socket.end(
        `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      lingerClose(socket);
    });
  }

  onRequest(fn: (res: EngineResponse, req: RequestInfo) => void): void {
    this.handler = fn;
  }

  ws<T>(h: WsHandlers<T>): void {
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: h.maxPayload,
      perMessageDeflate: false,
    });
    this.wsUpgrade = (req, socket, head) => {
      const decision = h.upgrade(new NodeRequest(req));
      if (!decision.ok) {
        const e = decision.error;
        const body = JSON.stringify(e.toBody());
        const extra = Object.entries(e.headers ?? {})
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('');
        socket.end(
          `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const s = new NodeSocket(ws, decision.data);
        this.sockets.add(s as NodeSocket<unknown>);
        ws.on('pong', () => (s.alive = true));
        ws.on('message', (data: Buffer, isBinary: boolean) => h.message(s, data, isBinary));
        ws.on('close', () => {
          this.sockets.delete(s as NodeSocket<unknown>);
          h.close(s);
        });
        ws.on('error', () => ws.terminate());
        h.open(s);
      });
    };
    // Pings keep idle connections open through proxies and find dead peers, as uWS's automatic pings do.
    this.pinger = setInterval(() => {
      for (const s of this.sockets) {
        if (!s.alive) s.ws.terminate();
        else {
          s.alive = false;
          s.ws.ping();
        }
      }
    }, WS_IDLE_MS / 2);
    this.pinger.unref();
  }

  listen(host: string, port: number, inherited?: unknown): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `cannot listen on ${host || '*'}:${port}: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.code === 'EADDRNOTAVAIL' ? 'the address is not available on this machine' : err.message}`,
          ),
        );
      const done = () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      };
      this.server.once('error', onError);
      if (inherited !== undefined) this.server.listen(inherited as { _handle: unknown }, done);
      else
        this.server.listen(
          {
            host: host === '' ? undefined : host,
            port,
            ...(nodeReusePort ? { reusePort: true } : {}),
          },
          done,
        );
    });
  }

  capConnections(n: number): void {
    // node:http closes a connection accepted beyond this; libuv keeps a spare descriptor, so
    // accept at the limit does not spin here.
    this.server.maxConnections = n;
  }

  listenerToPass(): object | undefined {
    if (nodeReusePort) return undefined;
    // Node before 22.12 cannot set SO_REUSEPORT, so the socket itself goes to the next gateway.
    // The raw handle, not the Server: a Server would start accepting in every process it passes.
    return (this.server as unknown as { _handle?: object | null })._handle ?? undefined;
  }

  stopListening(): void {
    // close() stops accepting; open keep-alive connections end with their next response.
    this.server.close();
    if (this.pinger) clearInterval(this.pinger);
  }
}
