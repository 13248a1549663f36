import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { hostAllowed } from './policy.js';

/**
 * The only way out of a sandbox whose network is a host list: an HTTP proxy (CONNECT for TLS,
 * absolute-form requests for plain HTTP) that lets through only the listed hosts. It listens on a
 * unix socket that is bound into the sandbox (on Linux the sandbox has no network of its own), or
 * on a loopback port where the OS sandbox filters by address (macOS).
 */
export interface NetworkProxy {
  /** The unix socket path, or `127.0.0.1:<port>`. */
  address: string;
  close: () => void;
}

function refusal(host: string, port: number): string {
  return `svc sandbox: ${host}:${port} is not on this session's network list; ask the user to add it (session settings, network).`;
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

export function startProxy(
  hosts: readonly string[],
  listenOn: { socket: string } | { loopback: true },
): Promise<NetworkProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('svc sandbox proxy: send absolute http:// URLs, or CONNECT for https.\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (url.protocol !== 'http:') {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('svc sandbox proxy: only http:// URLs here; https goes through CONNECT.\n');
      return;
    }
    if (!hostAllowed(hosts, host, port)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`${refusal(host, port)}\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = request(
      { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers },
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
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    if (!target) {
      client.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nsvc sandbox proxy: CONNECT needs host:port.\n',
      );
      return;
    }
    if (!hostAllowed(hosts, target.host, target.port)) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${refusal(target.host, target.port)}\n`,
      );
      return;
    }
    const up = connect(target.port, target.host);
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', (err) => {
      if (client.writable && up.connecting)
        client.end(
          `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\nsvc sandbox proxy: ${target.host}:${target.port}: ${err.message}\n`,
        );
      else client.destroy();
    });
    client.on('close', () => up.destroy());
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      const a = server.address();
      const address =
        'socket' in listenOn
          ? listenOn.socket
          : typeof a === 'object' && a
            ? `127.0.0.1:${a.port}`
            : '';
      resolve({
        address,
        close: () => {
          server.close();
          server.closeAllConnections();
          for (const s of sockets) s.destroy();
        },
      });
    };
    if ('socket' in listenOn) server.listen(listenOn.socket, done);
    else server.listen(0, '127.0.0.1', done);
  });
}
