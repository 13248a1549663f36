import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { decide, type EgressPolicy, type Lookup, type Verdict } from './egress.js';
import { isLoopbackName } from './peers.js';
import { handshake, REP, reply } from './socks.js';

/**
 * The only way out of a sandbox: an HTTP proxy (CONNECT for TLS and anything else over TCP,
 * absolute-form requests for plain HTTP) and a SOCKS5 side, both deciding each target by
 * `decide` (egress.ts) and connecting to the address it checked. On Linux the connections arrive
 * as sockets handed over by the bridge inside the sandbox (`handle`); on macOS the proxy listens
 * on loopback ports (`listen`), which the Seatbelt profile alone lets the command reach.
 * `peer` finds a server the session's own commands run (peers.ts) for a loopback name, before
 * the policy is asked: it lives in a sandbox of the same session, not on this machine's loopback.
 */
export interface EgressProxy {
  handle: (socket: Socket, side: 'http' | 'socks') => void;
  listen: () => Promise<{ http: number; socks: number }>;
  /** What it refused, for the tool's result (a SOCKS client cannot show a reason). */
  refusals: () => string[];
  close: () => void;
}

function splitHostPort(
  authority: string,
  defaultPort: number,
): { host: string; port: number } | undefined {
  const m =
    /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(authority) ??
    /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!m) return undefined;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1]!, port } : undefined;
}

const MAX_REFUSALS = 20;

export type PeerDial = (port: number) => Promise<Socket | undefined>;

export function createProxy(policy: EgressPolicy, lookup?: Lookup, peer?: PeerDial): EgressProxy {
  const sockets = new Set<Socket>();
  const refused: string[] = [];
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const judge = async (host: string, port: number): Promise<Verdict> => {
    const v = await decide(policy, host, port, lookup);
    if (!v.ok && refused.length < MAX_REFUSALS && !refused.includes(v.message))
      refused.push(v.message);
    return v;
  };
  /** Where a connection goes: the session's own server, the address checked, or a refusal. */
  const route = async (
    host: string,
    port: number,
  ): Promise<{ ok: true; to: string | Socket } | { ok: false; message: string }> => {
    const own = peer && isLoopbackName(host) ? await peer(port) : undefined;
    if (own) return { ok: true, to: own };
    const v = await judge(host, port);
    return v.ok ? { ok: true, to: v.address } : v;
  };

  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('svc sandbox proxy: send absolute http:// URLs, or CONNECT for https.\n');
      return;
    }
    if (url.protocol !== 'http:') {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('svc sandbox proxy: only http:// URLs here; https goes through CONNECT.\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    void route(host, port).then((r) => {
      if (!r.ok) {
        res.writeHead(403, { 'content-type': 'text/plain' }).end(`${r.message}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      const to = r.to;
      if (typeof to !== 'string') track(to);
      // To the address that was checked; the Host header keeps the name.
      const upstream = request(
        {
          ...(typeof to === 'string' ? { host: to } : { createConnection: () => to }),
          port,
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`svc sandbox proxy: ${host}:${port}: ${err.message}\n`);
      });
      req.pipe(upstream);
    });
  });

  const splice = (client: Socket, up: Socket, head: Buffer, ok: () => void) => {
    ok();
    if (head.length > 0) up.write(head);
    up.pipe(client);
    client.pipe(up);
  };

  /** Connects to the checked address; `ok`/`fail` speak the client's protocol. */
  const tunnel = (
    client: Socket,
    address: string | Socket,
    port: number,
    head: Buffer,
    ok: () => void,
    fail: (err: NodeJS.ErrnoException) => void,
  ) => {
    if (typeof address !== 'string') {
      track(address);
      client.on('close', () => address.destroy());
      return splice(client, address, head, ok);
    }
    const up = connect(port, address);
    track(up);
    up.once('connect', () => splice(client, up, head, ok));
    up.once('error', (err) => {
      if (client.writable && up.connecting) fail(err);
      else client.destroy();
    });
    client.on('close', () => up.destroy());
  };

  http.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    const target = splitHostPort(req.url ?? '', 443);
    const deny = (status: string, text: string) =>
      client.end(
        `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${text}\n`,
      );
    if (!target) return deny('400 Bad Request', 'svc sandbox proxy: CONNECT needs host:port.');
    void route(target.host, target.port).then((r) => {
      if (!r.ok) return deny('403 Forbidden', r.message);
      tunnel(
        client,
        r.to,
        target.port,
        head,
        () => client.write('HTTP/1.1 200 Connection Established\r\n\r\n'),
        (err) =>
          deny(
            '502 Bad Gateway',
            `svc sandbox proxy: ${target.host}:${target.port}: ${err.message}`,
          ),
      );
    });
  });
  http.on('clientError', (_err, socket) => socket.destroy());

  const socks = (client: Socket) => {
    track(client);
    handshake(client, (r) => {
      if (!r.ok) return;
      void route(r.host, r.port).then((to) => {
        if (!to.ok) return void client.end(reply(REP.notAllowed));
        tunnel(
          client,
          to.to,
          r.port,
          r.rest,
          () => client.write(reply(REP.ok)),
          (err) =>
            client.end(
              reply(
                err.code === 'ECONNREFUSED'
                  ? REP.refused
                  : err.code === 'ENETUNREACH'
                    ? REP.networkUnreachable
                    : err.code === 'EHOSTUNREACH'
                      ? REP.hostUnreachable
                      : REP.failure,
              ),
            ),
        );
      });
    });
  };
  const socksServer = createNetServer(socks);

  const handle = (socket: Socket, side: 'http' | 'socks') => {
    if (side === 'socks') socks(socket);
    else {
      track(socket);
      http.emit('connection', socket);
    }
  };

  return {
    handle,
    refusals: () => [...refused],
    listen: async () => {
      const on = (s: {
        listen: (p: number, h: string, cb: () => void) => unknown;
        address: () => unknown;
      }) =>
        new Promise<number>((resolve) =>
          s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)),
        );
      return { http: await on(http), socks: await on(socksServer) };
    },
    close: () => {
      http.close();
      http.closeAllConnections();
      socksServer.close();
      for (const s of sockets) s.destroy();
    },
  };
}
