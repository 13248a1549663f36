import { STATUS_CODES } from 'node:http';
import type * as UWS from 'uWebSockets.js';
import { loadUws } from '../../shared/engine-choice.js';
import { formatAddressBytes, isLoopbackBytes } from '../../shared/net/addr.js';
import type { EngineResponse, EngineSocket, HttpEngine, RequestInfo, WsHandlers } from './types.js';

/** Request data is copied out at once: uWS's request object dies when its callback returns. */
class UwsRequest implements RequestInfo {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string> = {};
  private readonly rawQuery: string;
  private parsedQuery: URLSearchParams | undefined;
  private peerBytes: Uint8Array | undefined;
  readonly urlLength: number;

  constructor(
    private readonly res: UWS.HttpResponse,
    req: UWS.HttpRequest,
  ) {
    this.method = req.getCaseSensitiveMethod(); // HTTP methods are case-sensitive: "get" is not GET
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    this.urlLength = this.path.length + (this.rawQuery ? this.rawQuery.length + 1 : 0);
    const headers = this.headers;
    req.forEach((k, v) => {
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    });
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  private get bytes(): Uint8Array {
    return (this.peerBytes ??= new Uint8Array(this.res.getRemoteAddress()));
  }

  get peer(): string {
    return formatAddressBytes(this.bytes);
  }

  get peerLoopback(): boolean {
    return isLoopbackBytes(this.bytes);
  }
}

/** The uWS response as the gateway's EngineResponse: mostly the same calls, one to one. */
class UwsResponse implements EngineResponse {
  private drain: (() => void) | undefined;

  constructor(private readonly res: UWS.HttpResponse) {}

  cork(fn: () => void): void {
    this.res.cork(fn);
  }
  writeStatus(line: string): void {
    this.res.writeStatus(line);
  }
  writeHeader(name: string, value: string): void {
    this.res.writeHeader(name, value);
  }
  end(body: string | Uint8Array, close: boolean): void {
    this.res.end(body, close);
  }
  endWithoutBody(length: number | undefined, close: boolean): void {
    // endWithoutBody(undefined, close) would write "Content-Length: 9223372036854775808"; only its
    // no-argument form writes no Content-Length, and it cannot close, so closing goes through end().
    // The pinned build also takes endWithoutBody(length) as the start of a body of that length,
    // leaves the request unanswered and aborts the process (a HEAD request did that), so the
    // length (and Connection: close, which the no-argument form cannot ask for) goes out as headers.
    if (length !== undefined) {
      this.res.writeHeader('Content-Length', String(length));
      if (close) this.res.writeHeader('Connection', 'close');
      this.res.endWithoutBody();
    } else if (close) this.res.end(undefined, true);
    else this.res.endWithoutBody();
  }
  write(chunk: string | Uint8Array): void {
    this.res.write(chunk);
  }
  finish(): void {
    this.res.end();
  }
  writeSized(chunk: Uint8Array, total: number): boolean {
    const res = this.res;
    const start = res.getWriteOffset();
    let ok = false;
    let done = false;
    res.cork(() => ([ok, done] = res.tryEnd(chunk, total)));
    if (ok || done) return true;
    res.onWritable((offset) => {
      const [ok2, done2] = res.tryEnd(chunk.subarray(offset - start), total);
      if (ok2 || done2) {
        const d = this.drain;
        this.drain = undefined;
        d?.();
      }
      return ok2;
    });
    return false;
  }
  onDrain(fn: () => void): void {
    this.drain = fn;
  }
  destroy(): void {
    this.res.cork(() => this.res.close());
  }
  onAborted(fn: () => void): void {
    this.res.onAborted(fn);
  }
  onData(fn: (chunk: Uint8Array, isLast: boolean) => void): void {
    this.res.onData((ab, isLast) => fn(new Uint8Array(ab), isLast));
  }
  pause(): void {
    this.res.pause();
  }
  resume(): void {
    this.res.resume();
  }
}

class UwsSocket<T> implements EngineSocket<T> {
  constructor(
    private readonly ws: UWS.WebSocket<{ data?: T }>,
    readonly data: T,
  ) {}
  send(text: string): void {
    this.ws.send(text);
  }
  bufferedAmount(): number {
    return this.ws.getBufferedAmount();
  }
  cork(fn: () => void): void {
    this.ws.cork(fn);
  }
  end(code: number, reason: string): void {
    this.ws.end(code, reason);
  }
}

/** uWebSockets.js: the fast engine where its native binary loads. */
export class UwsEngine implements HttpEngine {
  readonly name = 'uws' as const;
  private readonly uws: typeof UWS;
  private readonly app: UWS.TemplatedApp;
  private listenSocket: UWS.us_listen_socket | undefined;

  constructor() {
    const got = loadUws();
    if ('error' in got) throw new Error(got.error);
    this.uws = got.mod;
    // Responses must not name the server software: this uWS build's switch for its
    // "uWebSockets: 20" header (there is no named option for it).
    this.uws._cfg('999999990007');
    this.app = this.uws.App();
  }

  onRequest(fn: (res: EngineResponse, req: RequestInfo) => void): void {
    this.app.any('/*', (res, req) => fn(new UwsResponse(res), new UwsRequest(res, req)));
  }

  ws<T>(h: WsHandlers<T>): void {
    type Data = { data?: T; socket?: UwsSocket<T> };
    this.app.ws<Data>('/ws', {
      maxPayloadLength: h.maxPayload,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      maxBackpressure: 64 * 1024 * 1024,
      upgrade: (res, req, context) => {
        const info = new UwsRequest(res, req);
        const decision = h.upgrade(info);
        if (!decision.ok) return refuse(res, decision);
        res.upgrade<Data>(
          { data: decision.data },
          info.headers['sec-websocket-key'] ?? '',
          info.headers['sec-websocket-protocol'] ?? '',
          info.headers['sec-websocket-extensions'] ?? '',
          context,
        );
      },
      open: (ws) => {
        const user = ws.getUserData();
        user.socket = new UwsSocket(ws as unknown as UWS.WebSocket<{ data?: T }>, user.data as T);
        h.open(user.socket);
      },
      message: (ws, message, isBinary) => {
        const s = ws.getUserData().socket;
        if (s) h.message(s, Buffer.from(message), isBinary);
      },
      close: (ws) => {
        const s = ws.getUserData().socket;
        if (s) h.close(s);
      },
    });
  }

  async listen(host: string, port: number): Promise<number> {
    if (port === 0) {
      // uSockets sets SO_REUSEPORT only when a port is given, so a socket bound to port 0 could
      // never share its port with the next gateway on restart. Let the kernel pick a port, then
      // bind that port for real.
      const probe = await this.bind(host, 0);
      port = this.uws.us_socket_local_port(probe);
      this.uws.us_listen_socket_close(probe);
    }
    this.listenSocket = await this.bind(host, port);
    return this.uws.us_socket_local_port(this.listenSocket);
  }

  private bind(host: string, port: number): Promise<UWS.us_listen_socket> {
    return new Promise((resolve, reject) => {
      const done = (sock: UWS.us_listen_socket | false) => {
        if (!sock)
          reject(
            new Error(
              `cannot listen on ${host || '*'}:${port}: the address is in use or not available on this machine`,
            ),
          );
        else resolve(sock);
      };
      if (host === '') this.app.listen(port, done);
      else this.app.listen(host, port, done);
    });
  }

  capConnections(): void {
    // This uWS build has no hook for a connection before its first request (no App.filter):
    // the gateway counts requests in flight and WebSockets, and refuses beyond its cap with 503.
  }

  listenerToPass(): undefined {
    return undefined; // uSockets binds with SO_REUSEPORT: the next gateway binds the port itself
  }

  stopListening(): void {
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}

function refuse(
  res: UWS.HttpResponse,
  decision: { error: { status: number; headers?: Record<string, string>; toBody(): unknown } },
): void {
  const error = decision.error;
  res.cork(() => {
    res.writeStatus(`${error.status} ${STATUS_CODES[error.status] ?? ''}`);
    res.writeHeader('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(error.headers ?? {})) res.writeHeader(k, v);
    res.end(JSON.stringify(error.toBody()), true);
  });
}
