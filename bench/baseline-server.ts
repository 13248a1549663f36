import { createRequire } from 'node:module';
import { createServer } from 'node:http';

/**
 * Baselines for bench/http.ts, each in its own process like the svc gateway:
 *   node dist/bench/baseline-server.js uws|uws_async|node_http <host> <port>
 * Both answer `GET /api/health` with the same body and headers as the svc gateway
 * (`{"status":"ok","uptime_s":N,"sandbox":{…}}`, Content-Type, Cache-Control, X-Content-Type-Options) and 404
 * for anything else, and print `listening <port>` when ready.
 */

const [kind, host = '127.0.0.1', portArg = '0'] = process.argv.slice(2);
const startedAt = Date.now();
// The sandbox part is what svc's /api/health carries on a machine with bubblewrap (a constant there too).
const sandbox = { state: 'on', message: 'sandbox on (bubblewrap 0.8.0)' };
const body = () =>
  JSON.stringify({ status: 'ok', uptime_s: Math.round((Date.now() - startedAt) / 1000), sandbox });

// Exit with the parent: the bench harness holds our stdin open; EOF means it is gone.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

if (kind === 'uws' || kind === 'uws_async') {
  const require = createRequire(import.meta.url);
  const uws = require('uWebSockets.js') as typeof import('uWebSockets.js');
  const native = Function.prototype.toString.call(uws.App).includes('[native code]');
  const app = uws.App();
  const reply = (res: import('uWebSockets.js').HttpResponse) =>
    res
      .writeStatus('200 OK')
      .writeHeader('Cache-Control', 'no-store')
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('X-Content-Type-Options', 'nosniff')
      .end(body());
  if (kind === 'uws') {
    app.get('/api/health', (res) => void reply(res));
  } else {
    // Diagnostic: answer from a promise continuation (as an async route handler does), corked.
    app.get('/api/health', (res) => {
      let aborted = false;
      res.onAborted(() => (aborted = true));
      void Promise.resolve().then(() => {
        if (!aborted) res.cork(() => void reply(res));
      });
    });
  }
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end('');
  });
  app.listen(host, Number(portArg), (sock) => {
    if (!sock) {
      process.stderr.write(`cannot listen on ${host}:${portArg}\n`);
      process.exit(1);
    }
    process.stdout.write(
      `listening ${uws.us_socket_local_port(sock)} ${native ? 'native' : 'fallback'}\n`,
    );
  });
} else if (kind === 'node_http') {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api/health') {
      res.writeHead(200, {
        'Cache-Control': 'no-store',
        'Content-Type': 'application/json',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(body());
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(portArg), host, () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0} node\n`);
  });
} else {
  process.stderr.write('usage: baseline-server.js uws|uws_async|node_http <host> <port>\n');
  process.exit(2);
}
